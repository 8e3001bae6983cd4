import { defineMessages } from '../define.ts';

/** Messages and mails of payments, cancellation, support requests and the beta program. */
export const paymentMessages = defineMessages({
  en: {
    'payments.not_configured': 'Payments are not configured on this server.',
    'payments.provider_unavailable': 'The payment provider cannot be reached right now; nothing was changed. Try again in a moment.',
    'payments.payment_failed': 'The payment was declined, so your plan stays {tier}. Check your payment method and try again.',
    'payments.unknown_price': 'There is no plan with price_id {price_id}.',
    'payments.not_an_upgrade': 'That plan is not above your current one; use schedule-downgrade to move down at the end of the billing period.',
    'payments.not_a_downgrade': 'That plan is not below your current one; use confirm-upgrade to move up now.',
    'payments.already_on_plan': 'You are already on that plan.',
    'payments.change_in_progress': 'Another change of your plan is under way; try again once it has finished.',
    'payments.no_subscription': 'You have no paid subscription to change; start one through checkout.',
    'payments.discount_used': 'The retention discount can be used only once per account, and it has been.',
    'payments.support_forbidden': 'Support requests are for paid subscribers and beta testers.',
    'payments.webhook_signature_invalid': 'The webhook signature does not match its body.',
    'payments.webhook_malformed': 'The webhook body is not a Stripe event.',
    'payments.user_not_found': 'There is no such user.',
    'payments.renewal_date_past': 'The beta renewal date must be in the future.',
    'payments.mail.support_team.subject': '[Priority] Support request from {username}: {reason}',
    'payments.mail.support_team.body':
      'User: {name} <{email}> (id {user_id})\nTier: {tier}\nSubscription status: {status}\nPaid subscriber: {paid}\nBeta tester: {beta}\nAI minutes: {balance} balance, {reserved} reserved\nReason: {reason}\n\n{message}',
    'payments.mail.support_confirmation.subject': 'We received your support request',
    'payments.mail.support_confirmation.body':
      'Hello {name},\n\nThank you for writing to us. Your request ({reason}) reached the Cutroom team as a priority request and we will answer by e-mail soon.\n\nYour message:\n{message}',
    'payments.mail.renewal_reminder.subject': 'Your Cutroom plan renews on {date}',
    'payments.mail.renewal_reminder.body':
      'Hello {name},\n\nAs you asked, a reminder: your {tier} plan renews on {date}. If you want to change or cancel it, do so before then in your billing settings: {link}',
  },
  pt: {
    'payments.not_configured': 'Os pagamentos não estão configurados neste servidor.',
    'payments.provider_unavailable': 'Não é possível contactar o fornecedor de pagamentos neste momento; nada foi alterado. Tente novamente daqui a pouco.',
    'payments.payment_failed': 'O pagamento foi recusado, por isso o seu plano continua a ser {tier}. Verifique o seu meio de pagamento e tente novamente.',
    'payments.unknown_price': 'Não existe nenhum plano com price_id {price_id}.',
    'payments.not_an_upgrade': 'Esse plano não é superior ao atual; use schedule-downgrade para descer no fim do período de faturação.',
    'payments.not_a_downgrade': 'Esse plano não é inferior ao atual; use confirm-upgrade para subir já.',
    'payments.already_on_plan': 'Já está nesse plano.',
    'payments.change_in_progress': 'Outra alteração do seu plano está em curso; tente de novo quando terminar.',
    'payments.no_subscription': 'Não tem nenhuma subscrição paga para alterar; comece uma através do checkout.',
    'payments.discount_used': 'O desconto de permanência só pode ser usado uma vez por conta, e já foi usado.',
    'payments.support_forbidden': 'Os pedidos de suporte são para assinantes pagos e testadores beta.',
    'payments.webhook_signature_invalid': 'A assinatura do webhook não corresponde ao corpo.',
    'payments.webhook_malformed': 'O corpo do webhook não é um evento do Stripe.',
    'payments.user_not_found': 'Esse utilizador não existe.',
    'payments.renewal_date_past': 'A data de renovação beta tem de ser futura.',
    'payments.mail.support_team.subject': '[Prioritário] Pedido de suporte de {username}: {reason}',
    'payments.mail.support_team.body':
      'Utilizador: {name} <{email}> (id {user_id})\nPlano: {tier}\nEstado da subscrição: {status}\nAssinante pago: {paid}\nTestador beta: {beta}\nMinutos de IA: {balance} de saldo, {reserved} reservados\nMotivo: {reason}\n\n{message}',
    'payments.mail.support_confirmation.subject': 'Recebemos o seu pedido de suporte',
    'payments.mail.support_confirmation.body':
      'Olá {name},\n\nObrigado por nos escrever. O seu pedido ({reason}) chegou à equipa do Cutroom como pedido prioritário e responderemos por e-mail em breve.\n\nA sua mensagem:\n{message}',
    'payments.mail.renewal_reminder.subject': 'O seu plano Cutroom renova-se a {date}',
    'payments.mail.renewal_reminder.body':
      'Olá {name},\n\nComo pediu, um lembrete: o seu plano {tier} renova-se a {date}. Se o quiser alterar ou cancelar, faça-o antes dessa data nas definições de faturação: {link}',
  },
  es: {
    'payments.not_configured': 'Los pagos no están configurados en este servidor.',
    'payments.provider_unavailable': 'No se puede contactar con el proveedor de pagos en este momento; no se ha cambiado nada. Inténtelo de nuevo en un momento.',
    'payments.payment_failed': 'El pago fue rechazado, así que su plan sigue siendo {tier}. Revise su método de pago e inténtelo de nuevo.',
    'payments.unknown_price': 'No hay ningún plan con price_id {price_id}.',
    'payments.not_an_upgrade': 'Ese plan no es superior al actual; use schedule-downgrade para bajar al final del periodo de facturación.',
    'payments.not_a_downgrade': 'Ese plan no es inferior al actual; use confirm-upgrade para subir ahora.',
    'payments.already_on_plan': 'Ya está en ese plan.',
    'payments.change_in_progress': 'Otro cambio de su plan está en curso; inténtelo de nuevo cuando termine.',
    'payments.no_subscription': 'No tiene ninguna suscripción de pago que cambiar; empiece una mediante el checkout.',
    'payments.discount_used': 'El descuento de permanencia solo puede usarse una vez por cuenta, y ya se ha usado.',
    'payments.support_forbidden': 'Las solicitudes de soporte son para suscriptores de pago y probadores beta.',
    'payments.webhook_signature_invalid': 'La firma del webhook no coincide con su cuerpo.',
    'payments.webhook_malformed': 'El cuerpo del webhook no es un evento de Stripe.',
    'payments.user_not_found': 'Ese usuario no existe.',
    'payments.renewal_date_past': 'La fecha de renovación beta debe ser futura.',
    'payments.mail.support_team.subject': '[Prioritaria] Solicitud de soporte de {username}: {reason}',
    'payments.mail.support_team.body':
      'Usuario: {name} <{email}> (id {user_id})\nPlan: {tier}\nEstado de la suscripción: {status}\nSuscriptor de pago: {paid}\nProbador beta: {beta}\nMinutos de IA: {balance} de saldo, {reserved} reservados\nMotivo: {reason}\n\n{message}',
    'payments.mail.support_confirmation.subject': 'Hemos recibido su solicitud de soporte',
    'payments.mail.support_confirmation.body':
      'Hola {name}:\n\nGracias por escribirnos. Su solicitud ({reason}) ha llegado al equipo de Cutroom como solicitud prioritaria y le responderemos por correo pronto.\n\nSu mensaje:\n{message}',
    'payments.mail.renewal_reminder.subject': 'Su plan de Cutroom se renueva el {date}',
    'payments.mail.renewal_reminder.body':
      'Hola {name}:\n\nComo pidió, un recordatorio: su plan {tier} se renueva el {date}. Si quiere cambiarlo o cancelarlo, hágalo antes en la configuración de facturación: {link}',
  },
});
