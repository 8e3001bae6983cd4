import { defineMessages } from '../define.ts';

/** Messages of plans, the trial and AI-minute credits. */
export const billingMessages = defineMessages({
  en: {
    'billing.trial_used': 'The trial has already been used by this account or this e-mail address.',
    'billing.plan_active': 'You already have an active plan.',
    'billing.insufficient_credits': 'This needs {needed} AI minutes and your balance is {balance}.',
    'billing.insufficient_credits_reserved': 'This needs {needed} AI minutes; your balance is {balance}, of which {reserved} are reserved by analyses in progress, so {available} are available.',
  },
  pt: {
    'billing.trial_used': 'O período experimental já foi usado por esta conta ou por este endereço de e-mail.',
    'billing.plan_active': 'Já tem um plano ativo.',
    'billing.insufficient_credits': 'São necessários {needed} minutos de IA e o seu saldo é {balance}.',
    'billing.insufficient_credits_reserved': 'São necessários {needed} minutos de IA; o seu saldo é {balance}, dos quais {reserved} estão reservados por análises em curso, por isso {available} estão disponíveis.',
  },
  es: {
    'billing.trial_used': 'El periodo de prueba ya lo ha usado esta cuenta o esta dirección de correo.',
    'billing.plan_active': 'Ya tiene un plan activo.',
    'billing.insufficient_credits': 'Se necesitan {needed} minutos de IA y su saldo es {balance}.',
    'billing.insufficient_credits_reserved': 'Se necesitan {needed} minutos de IA; su saldo es {balance}, de los cuales {reserved} están reservados por análisis en curso, así que hay {available} disponibles.',
  },
});
