import { defineMessages } from '../define.ts';

/** Analysis requests, runs, and why an analysis failed (`failure.analysis.*`). */
export const analysisMessages = defineMessages({
  en: {
    'analysis.no_media': 'The project has no media to analyze: add a video or audio file first.',
    'analysis.source_processing': 'A media file of the project is still being processed; analyze it once every file is ready.',
    'analysis.silent_sources': 'Every media file of the project is silent: there is no speech to analyze.',
    'analysis.director_not_included': 'Director notes are part of the Creator and Viral plans; leave director_notes empty or upgrade your plan.',
    'analysis.already_analyzing': 'The project is already being analyzed.',
    'analysis.run_not_completed': 'Only a completed analysis run can be activated (this one is {status}).',
    'analysis.run_not_found': 'Analysis run not found in this project.',
    'analysis.run_not_running': 'Only a queued or running analysis can be cancelled (this one is {status}).',
    'analysis.run_of_another_project': 'This analysis run does not belong to the project.',
  },
  pt: {
    'analysis.no_media': 'O projeto não tem mídia para analisar: adicione primeiro um ficheiro de vídeo ou áudio.',
    'analysis.source_processing': 'Um ficheiro de mídia do projeto ainda está a ser processado; analise quando todos estiverem prontos.',
    'analysis.silent_sources': 'Todos os ficheiros de mídia do projeto estão em silêncio: não há fala para analisar.',
    'analysis.director_not_included': 'As notas de realização fazem parte dos planos Creator e Viral; deixe director_notes vazio ou mude de plano.',
    'analysis.already_analyzing': 'O projeto já está a ser analisado.',
    'analysis.run_not_completed': 'Só uma análise concluída pode ser ativada (esta está {status}).',
    'analysis.run_not_found': 'Análise não encontrada neste projeto.',
    'analysis.run_not_running': 'Só uma análise em fila ou em curso pode ser cancelada (esta está {status}).',
    'analysis.run_of_another_project': 'Esta análise não pertence ao projeto.',
  },
  es: {
    'analysis.no_media': 'El proyecto no tiene medios que analizar: añada primero un archivo de vídeo o audio.',
    'analysis.source_processing': 'Un archivo multimedia del proyecto aún se está procesando; analícelo cuando todos estén listos.',
    'analysis.silent_sources': 'Todos los archivos multimedia del proyecto están en silencio: no hay voz que analizar.',
    'analysis.director_not_included': 'Las notas de dirección forman parte de los planes Creator y Viral; deje director_notes vacío o mejore su plan.',
    'analysis.already_analyzing': 'El proyecto ya se está analizando.',
    'analysis.run_not_completed': 'Solo se puede activar un análisis completado (este está {status}).',
    'analysis.run_not_found': 'Análisis no encontrado en este proyecto.',
    'analysis.run_not_running': 'Solo se puede cancelar un análisis en cola o en curso (este está {status}).',
    'analysis.run_of_another_project': 'Este análisis no pertenece al proyecto.',
  },
});
