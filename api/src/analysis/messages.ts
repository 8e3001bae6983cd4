import { defineMessages } from '../i18n/define.ts';

/** Analysis requests, runs, and why an analysis failed (`failure.analysis.*`). */
export const analysisMessages = defineMessages({
  en: {
    'analysis.no_media': 'The project has no media to analyze: add a video or audio file first.',
    'analysis.source_processing': 'A media file of the project is still being processed; analyze it once every file is ready.',
    'analysis.silent_sources': 'Every media file of the project is silent: there is no speech to analyze.',
    'analysis.already_analyzing': 'The project is already being analyzed.',
    'analysis.run_not_completed': 'Only a completed analysis run can be activated (this one is {status}).',
    'analysis.run_of_another_project': 'This analysis run does not belong to the project.',
    'failure.analysis.no_words': 'No speech could be recognized in the audio.',
    'failure.analysis.unsupported_language': 'The language "{language}" is not supported by the transcription service.',
    'failure.analysis.transcriber_unavailable': 'The transcription service could not be reached; try again later.',
    'failure.analysis.transcriber_failed': 'The transcription service failed: {detail}',
    'failure.analysis.corrupt_audio': 'The audio of a media file could not be read.',
  },
  pt: {
    'analysis.no_media': 'O projeto não tem mídia para analisar: adicione primeiro um ficheiro de vídeo ou áudio.',
    'analysis.source_processing': 'Um ficheiro de mídia do projeto ainda está a ser processado; analise quando todos estiverem prontos.',
    'analysis.silent_sources': 'Todos os ficheiros de mídia do projeto estão em silêncio: não há fala para analisar.',
    'analysis.already_analyzing': 'O projeto já está a ser analisado.',
    'analysis.run_not_completed': 'Só uma análise concluída pode ser ativada (esta está {status}).',
    'analysis.run_of_another_project': 'Esta análise não pertence ao projeto.',
    'failure.analysis.no_words': 'Não foi possível reconhecer fala no áudio.',
    'failure.analysis.unsupported_language': 'O idioma "{language}" não é suportado pelo serviço de transcrição.',
    'failure.analysis.transcriber_unavailable': 'Não foi possível contactar o serviço de transcrição; tente de novo mais tarde.',
    'failure.analysis.transcriber_failed': 'O serviço de transcrição falhou: {detail}',
    'failure.analysis.corrupt_audio': 'Não foi possível ler o áudio de um ficheiro de mídia.',
  },
  es: {
    'analysis.no_media': 'El proyecto no tiene medios que analizar: añada primero un archivo de vídeo o audio.',
    'analysis.source_processing': 'Un archivo multimedia del proyecto aún se está procesando; analícelo cuando todos estén listos.',
    'analysis.silent_sources': 'Todos los archivos multimedia del proyecto están en silencio: no hay voz que analizar.',
    'analysis.already_analyzing': 'El proyecto ya se está analizando.',
    'analysis.run_not_completed': 'Solo se puede activar un análisis completado (este está {status}).',
    'analysis.run_of_another_project': 'Este análisis no pertenece al proyecto.',
    'failure.analysis.no_words': 'No se pudo reconocer voz en el audio.',
    'failure.analysis.unsupported_language': 'El idioma "{language}" no es compatible con el servicio de transcripción.',
    'failure.analysis.transcriber_unavailable': 'No se pudo contactar con el servicio de transcripción; inténtelo más tarde.',
    'failure.analysis.transcriber_failed': 'El servicio de transcripción falló: {detail}',
    'failure.analysis.corrupt_audio': 'No se pudo leer el audio de un archivo multimedia.',
  },
});
