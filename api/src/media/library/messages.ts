import { defineMessages } from '../../i18n/define.ts';

/** Messages of the media library, playback and the user stream. */
export const mediaLibraryMessages = defineMessages({
  en: {
    'library.item_not_found': 'Media item not found.',
    'library.group_not_found': 'Media group not found.',
    'playback.not_ready': 'This media has not finished uploading, so it cannot be played yet.',
    'playback.token_invalid': 'This playback link is invalid or has expired. Ask for a new one.',
    'stream.too_many_connections': 'Too many open event streams (at most {limit}). Close one and try again.',
  },
  pt: {
    'library.item_not_found': 'Item de média não encontrado.',
    'library.group_not_found': 'Grupo de média não encontrado.',
    'playback.not_ready': 'Esta média ainda não terminou de carregar, por isso ainda não pode ser reproduzida.',
    'playback.token_invalid': 'Esta ligação de reprodução é inválida ou expirou. Peça uma nova.',
    'stream.too_many_connections': 'Demasiados fluxos de eventos abertos (no máximo {limit}). Feche um e tente de novo.',
  },
  es: {
    'library.item_not_found': 'Elemento multimedia no encontrado.',
    'library.group_not_found': 'Grupo multimedia no encontrado.',
    'playback.not_ready': 'Este archivo aún no ha terminado de subirse, así que todavía no se puede reproducir.',
    'playback.token_invalid': 'Este enlace de reproducción no es válido o ha caducado. Pida uno nuevo.',
    'stream.too_many_connections': 'Demasiados flujos de eventos abiertos (como máximo {limit}). Cierre uno e inténtelo de nuevo.',
  },
});
