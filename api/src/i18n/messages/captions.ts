import { defineMessages } from '../define.ts';

/** Caption lines: generation and edits. */
export const captionMessages = defineMessages({
  en: {
    'caption.not_found': 'Caption line not found.',
    'caption.not_analyzed': 'The project has no completed analysis yet: analyze it before generating captions.',
    'caption.generated': 'Caption lines generated from the transcript: {count}.',
    'caption.kept': 'The active analysis already has caption lines ({count}); they were kept. Generate with force=true to replace them.',
  },
  pt: {
    'caption.not_found': 'Linha de legenda não encontrada.',
    'caption.not_analyzed': 'O projeto ainda não tem uma análise concluída: analise-o antes de gerar legendas.',
    'caption.generated': 'Linhas de legenda geradas a partir da transcrição: {count}.',
    'caption.kept': 'A análise ativa já tem linhas de legenda ({count}); foram mantidas. Gere com force=true para as substituir.',
  },
  es: {
    'caption.not_found': 'Línea de subtítulo no encontrada.',
    'caption.not_analyzed': 'El proyecto aún no tiene un análisis completado: analícelo antes de generar subtítulos.',
    'caption.generated': 'Líneas de subtítulo generadas a partir de la transcripción: {count}.',
    'caption.kept': 'El análisis activo ya tiene líneas de subtítulo ({count}); se conservaron. Genere con force=true para reemplazarlas.',
  },
});
