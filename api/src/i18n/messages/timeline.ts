import { defineMessages } from '../define.ts';

/** The timeline bound shared by edits, drafts and exports. */
export const timelineMessages = defineMessages({
  en: {
    'timeline.no_media': 'The project has no media: add a video or audio file first.',
    'timeline.beyond_duration': '{field} ({value_ms} ms) exceeds the timeline duration ({duration_ms} ms).',
    'timeline.source_failed': '“{name}” could not be processed and plays nothing: delete it from the project, or upload it again, first.',
  },
  pt: {
    'timeline.no_media': 'O projeto não tem mídia: adicione primeiro um ficheiro de vídeo ou áudio.',
    'timeline.beyond_duration': '{field} ({value_ms} ms) excede a duração da linha do tempo ({duration_ms} ms).',
    'timeline.source_failed': '“{name}” não pôde ser processado e não é reproduzido: elimine-o do projeto, ou carregue-o de novo, primeiro.',
  },
  es: {
    'timeline.no_media': 'El proyecto no tiene medios: añada primero un archivo de vídeo o audio.',
    'timeline.beyond_duration': '{field} ({value_ms} ms) supera la duración de la línea de tiempo ({duration_ms} ms).',
    'timeline.source_failed': '“{name}” no se pudo procesar y no se reproduce: elimínelo del proyecto, o vuelva a subirlo, primero.',
  },
});
