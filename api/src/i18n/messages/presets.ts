import { defineMessages } from '../define.ts';

/** Messages of analysis and preview presets. */
export const presetMessages = defineMessages({
  en: {
    'preset.not_found': 'Preset not found.',
    'preset.limit_reached': 'You can keep at most {max} analysis presets. Delete one to create another.',
  },
  pt: {
    'preset.not_found': 'Predefinição não encontrada.',
    'preset.limit_reached': 'Pode guardar no máximo {max} predefinições de análise. Apague uma para criar outra.',
  },
  es: {
    'preset.not_found': 'Ajuste preestablecido no encontrado.',
    'preset.limit_reached': 'Puede guardar como máximo {max} ajustes preestablecidos de análisis. Elimine uno para crear otro.',
  },
});
