import { defineMessages } from '../define.ts';

/** Messages of the media library, playback and the user stream. */
export const mediaLibraryMessages = defineMessages({
  en: {
    'library.item_not_found': 'Media item not found.',
    'library.group_not_found': 'Media group not found.',
    'playback.not_ready': 'This media has not finished uploading, so it cannot be played yet.',
    'playback.processing': 'This media is still being processed; it can be played once it is ready (media_ready).',
    'playback.token_invalid': 'This playback link is invalid or has expired. Ask for a new one.',
    'stream.too_many_connections': 'Too many open event streams of this kind (at most {limit}). Close one and try again.',
    'stream.busy': 'The server has no room for another event stream right now. Try again in a few seconds.',
  },
  pt: {
    'library.item_not_found': 'Item de média não encontrado.',
    'library.group_not_found': 'Grupo de média não encontrado.',
    'playback.not_ready': 'Esta média ainda não terminou de carregar, por isso ainda não pode ser reproduzida.',
    'playback.processing': 'Esta média ainda está a ser processada; pode ser reproduzida quando estiver pronta (media_ready).',
    'playback.token_invalid': 'Esta ligação de reprodução é inválida ou expirou. Peça uma nova.',
    'stream.too_many_connections': 'Demasiados fluxos de eventos abertos deste tipo (no máximo {limit}). Feche um e tente de novo.',
    'stream.busy': 'O servidor não tem lugar para mais um fluxo de eventos neste momento. Tente de novo dentro de alguns segundos.',
  },
  es: {
    'library.item_not_found': 'Elemento multimedia no encontrado.',
    'library.group_not_found': 'Grupo multimedia no encontrado.',
    'playback.not_ready': 'Este archivo aún no ha terminado de subirse, así que todavía no se puede reproducir.',
    'playback.processing': 'Este archivo aún se está procesando; se podrá reproducir cuando esté listo (media_ready).',
    'playback.token_invalid': 'Este enlace de reproducción no es válido o ha caducado. Pida uno nuevo.',
    'stream.too_many_connections': 'Demasiados flujos de eventos abiertos de este tipo (como máximo {limit}). Cierre uno e inténtelo de nuevo.',
    'stream.busy': 'El servidor no tiene sitio para otro flujo de eventos ahora mismo. Inténtelo de nuevo en unos segundos.',
  },
});
