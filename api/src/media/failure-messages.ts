import { fillPlaceholders } from '../i18n/format.ts';
import { defineMessages } from '../i18n/define.ts';
import { jobFailureMessages } from '../jobs/messages.ts';
import type { Locale, MessageParams } from '../i18n/index.ts';

/**
 * Why a media file failed, by stable code: job programs' `JobFailure` codes, the job
 * system's own (`job.*`) and service-raised ones. Stored as `media_files.error_code`
 * and `error_params`; `error` keeps the English text as the fallback.
 */
export const failureMessages = defineMessages({
  en: {
    'failure.media.empty': 'The uploaded file is empty (0 bytes).',
    'failure.media.corrupt': 'The file is corrupt or not a media file that can be read.',
    'failure.media.truncated': 'The media file is truncated; the upload was probably cut short, upload it again.',
    'failure.media.undecodable': 'The media file could not be decoded.',
    'failure.media.unsupported_type': 'Unsupported content type "{content_type}": upload a video, audio or image file.',
    'failure.media.no_streams': 'Unsupported content: the file has no audio, video or image stream.',
    'failure.media.no_dimensions': 'The media file is unreadable: its picture has no dimensions.',
    'failure.media.no_duration': 'The media file is unreadable: it has no measurable duration.',
    'failure.media.missing_source': 'The source file does not exist.',
    'failure.media.download_interrupted': 'The source file could not be read completely.',
    'failure.media.not_video': 'The media file is not a video: it has no proxy.',
    'failure.proxy.failed': 'The proxy of the media file could not be made.',
    'failure.edit.not_editable': 'Images cannot be edited: only video and audio files can be trimmed or cut.',
    'failure.edit.no_audio': 'The source has no audio track to extract.',
    'failure.edit.nothing_kept': 'Nothing of the source is left once the range is applied and the cuts are removed.',
    'failure.edit.failed': 'The edit could not be made.',
    'failure.edit.quota_exceeded': 'The result ({size_mb} MB) does not fit in your storage quota ({quota_mb} MB); free some space and try again.',
    'failure.import.download_failed': 'The video could not be downloaded from {host}.',
    'failure.import.download_refused': 'The video host answered {status} for the download.',
    'failure.import.too_large': 'The video is over the {max_bytes}-byte maximum.',
    'failure.import.empty': 'The video host sent an empty file.',
    'failure.import.quota_exceeded': 'The video ({size_mb} MB) does not fit in your storage quota ({quota_mb} MB); free some space and import it again.',
    'failure.upload.quota_exceeded': 'The uploaded file does not fit the storage quota.',
  },
  pt: {
    'failure.media.empty': 'O ficheiro carregado está vazio (0 bytes).',
    'failure.media.corrupt': 'O ficheiro está corrompido ou não é um ficheiro de mídia legível.',
    'failure.media.truncated': 'O ficheiro de mídia está truncado; o carregamento foi provavelmente interrompido, carregue-o de novo.',
    'failure.media.undecodable': 'Não foi possível descodificar o ficheiro de mídia.',
    'failure.media.unsupported_type': 'Tipo de conteúdo não suportado "{content_type}": carregue um ficheiro de vídeo, áudio ou imagem.',
    'failure.media.no_streams': 'Conteúdo não suportado: o ficheiro não tem faixa de áudio, vídeo ou imagem.',
    'failure.media.no_dimensions': 'O ficheiro de mídia é ilegível: a imagem não tem dimensões.',
    'failure.media.no_duration': 'O ficheiro de mídia é ilegível: não tem duração mensurável.',
    'failure.media.missing_source': 'O ficheiro de origem não existe.',
    'failure.media.download_interrupted': 'Não foi possível ler o ficheiro de origem por completo.',
    'failure.media.not_video': 'O ficheiro de mídia não é um vídeo: não tem proxy.',
    'failure.proxy.failed': 'Não foi possível criar o proxy do ficheiro de mídia.',
    'failure.edit.not_editable': 'Imagens não podem ser editadas: só ficheiros de vídeo e áudio podem ser aparados ou cortados.',
    'failure.edit.no_audio': 'A origem não tem faixa de áudio para extrair.',
    'failure.edit.nothing_kept': 'Não sobra nada da origem depois de aplicar o intervalo e remover os cortes.',
    'failure.edit.failed': 'Não foi possível fazer a edição.',
    'failure.edit.quota_exceeded': 'O resultado ({size_mb} MB) não cabe na sua quota de armazenamento ({quota_mb} MB); liberte espaço e tente de novo.',
    'failure.import.download_failed': 'Não foi possível descarregar o vídeo de {host}.',
    'failure.import.download_refused': 'O servidor do vídeo respondeu {status} ao download.',
    'failure.import.too_large': 'O vídeo excede o máximo de {max_bytes} bytes.',
    'failure.import.empty': 'O servidor do vídeo enviou um ficheiro vazio.',
    'failure.import.quota_exceeded': 'O vídeo ({size_mb} MB) não cabe na sua quota de armazenamento ({quota_mb} MB); liberte espaço e importe-o de novo.',
    'failure.upload.quota_exceeded': 'O ficheiro carregado não cabe na quota de armazenamento.',
  },
  es: {
    'failure.media.empty': 'El archivo subido está vacío (0 bytes).',
    'failure.media.corrupt': 'El archivo está dañado o no es un archivo multimedia legible.',
    'failure.media.truncated': 'El archivo multimedia está truncado; probablemente la subida se interrumpió, súbalo de nuevo.',
    'failure.media.undecodable': 'No se pudo decodificar el archivo multimedia.',
    'failure.media.unsupported_type': 'Tipo de contenido no admitido "{content_type}": suba un archivo de vídeo, audio o imagen.',
    'failure.media.no_streams': 'Contenido no admitido: el archivo no tiene pista de audio, vídeo ni imagen.',
    'failure.media.no_dimensions': 'El archivo multimedia es ilegible: su imagen no tiene dimensiones.',
    'failure.media.no_duration': 'El archivo multimedia es ilegible: no tiene una duración medible.',
    'failure.media.missing_source': 'El archivo de origen no existe.',
    'failure.media.download_interrupted': 'No se pudo leer el archivo de origen por completo.',
    'failure.media.not_video': 'El archivo multimedia no es un vídeo: no tiene proxy.',
    'failure.proxy.failed': 'No se pudo crear el proxy del archivo multimedia.',
    'failure.edit.not_editable': 'Las imágenes no se pueden editar: solo los archivos de vídeo y audio se pueden recortar o cortar.',
    'failure.edit.no_audio': 'El origen no tiene pista de audio que extraer.',
    'failure.edit.nothing_kept': 'No queda nada del origen tras aplicar el intervalo y eliminar los cortes.',
    'failure.edit.failed': 'No se pudo realizar la edición.',
    'failure.edit.quota_exceeded': 'El resultado ({size_mb} MB) no cabe en su cuota de almacenamiento ({quota_mb} MB); libere espacio e inténtelo de nuevo.',
    'failure.import.download_failed': 'No se pudo descargar el vídeo de {host}.',
    'failure.import.download_refused': 'El servidor del vídeo respondió {status} a la descarga.',
    'failure.import.too_large': 'El vídeo supera el máximo de {max_bytes} bytes.',
    'failure.import.empty': 'El servidor del vídeo envió un archivo vacío.',
    'failure.import.quota_exceeded': 'El vídeo ({size_mb} MB) no cabe en su cuota de almacenamiento ({quota_mb} MB); libere espacio e impórtelo de nuevo.',
    'failure.upload.quota_exceeded': 'El archivo subido no cabe en la cuota de almacenamiento.',
  },
});

/** Media failures and the job system's own, which media files show too. */
const failureCatalog = {
  en: { ...failureMessages.en, ...jobFailureMessages.en },
  pt: { ...failureMessages.pt, ...jobFailureMessages.pt },
  es: { ...failureMessages.es, ...jobFailureMessages.es },
};
type FailureKey = keyof typeof failureCatalog.en;

/**
 * The failure in `locale`; an unknown or missing code gives the fallback text.
 * (Reads this module's catalog directly: `i18n/catalogs.ts` imports this module.)
 */
export function failureText(locale: Locale, code: string | null | undefined, params: MessageParams | null | undefined, fallback: string): string {
  if (!code) return fallback;
  const key = `failure.${code}`;
  if (!Object.hasOwn(failureCatalog.en, key)) return fallback;
  const template = failureCatalog[locale][key as FailureKey] ?? failureCatalog.en[key as FailureKey];
  return fillPlaceholders(template, params ?? {});
}
