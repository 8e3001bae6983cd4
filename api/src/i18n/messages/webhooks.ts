import { defineMessages } from '../define.ts';

/** Messages of webhook endpoints and the mail that says one was disabled. */
export const webhookMessages = defineMessages({
  en: {
    'webhook.not_found': 'Webhook endpoint not found.',
    'webhook.delivery_not_found': 'Webhook delivery not found.',
    'webhook.limit_reached': 'You can register at most {max} webhook endpoints. Delete one to add another.',
    'webhook.target_refused': 'This webhook URL cannot be used: {reason}.',
    'webhook.endpoint_disabled': 'The webhook endpoint is disabled; enable it before redelivering.',
    'webhook.delivery_in_flight': 'This delivery is being attempted right now.',
    'webhook.mail.disabled.subject': 'Your Cutroom webhook endpoint was disabled',
    'webhook.mail.disabled.body':
      'Hello {name},\n\nEvery delivery to your webhook endpoint {url} has failed for {days} days, so Cutroom has disabled it. The last error was: {error}\n\nFix the receiver, then enable the endpoint again (PATCH /api/v1/users/me/webhooks/{id} with enabled true); its delivery log shows each attempt.',
  },
  pt: {
    'webhook.not_found': 'Endpoint de webhook não encontrado.',
    'webhook.delivery_not_found': 'Entrega de webhook não encontrada.',
    'webhook.limit_reached': 'Pode registar no máximo {max} endpoints de webhook. Apague um para adicionar outro.',
    'webhook.target_refused': 'Este URL de webhook não pode ser usado: {reason}.',
    'webhook.endpoint_disabled': 'O endpoint de webhook está desativado; ative-o antes de reenviar.',
    'webhook.delivery_in_flight': 'Esta entrega está a ser tentada neste momento.',
    'webhook.mail.disabled.subject': 'O seu endpoint de webhook Cutroom foi desativado',
    'webhook.mail.disabled.body':
      'Olá {name},\n\nTodas as entregas ao seu endpoint de webhook {url} falharam durante {days} dias, por isso o Cutroom desativou-o. O último erro foi: {error}\n\nCorrija o recetor e volte a ativar o endpoint (PATCH /api/v1/users/me/webhooks/{id} com enabled true); o registo de entregas mostra cada tentativa.',
  },
  es: {
    'webhook.not_found': 'Endpoint de webhook no encontrado.',
    'webhook.delivery_not_found': 'Entrega de webhook no encontrada.',
    'webhook.limit_reached': 'Puede registrar como máximo {max} endpoints de webhook. Elimine uno para añadir otro.',
    'webhook.target_refused': 'Esta URL de webhook no se puede usar: {reason}.',
    'webhook.endpoint_disabled': 'El endpoint de webhook está desactivado; actívelo antes de reenviar.',
    'webhook.delivery_in_flight': 'Esta entrega se está intentando en este momento.',
    'webhook.mail.disabled.subject': 'Su endpoint de webhook de Cutroom fue desactivado',
    'webhook.mail.disabled.body':
      'Hola {name},\n\nTodas las entregas a su endpoint de webhook {url} han fallado durante {days} días, así que Cutroom lo ha desactivado. El último error fue: {error}\n\nCorrija el receptor y vuelva a activar el endpoint (PATCH /api/v1/users/me/webhooks/{id} con enabled true); el registro de entregas muestra cada intento.',
  },
});
