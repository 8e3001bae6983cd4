import { defineMessages } from '../define.ts';

/** Messages of Idempotency-Key handling. */
export const idempotencyMessages = defineMessages({
  en: {
    'idempotency.invalid_key': 'Validation error: header.Idempotency-Key: the key must be 1 to 255 printable ASCII characters.',
    'idempotency.key_reused': 'This Idempotency-Key was already used for a different request (first used for {method} {route}; the path, query or body differ). Use a new key for a new request.',
    'idempotency.in_progress': 'A request with this Idempotency-Key is still being processed. Retry in a moment to receive its response.',
    'idempotency.response_not_kept': 'The request with this Idempotency-Key was carried out (status {status}), but its response was larger than {max_kib} KiB and was not kept; read the result with a GET.',
    'idempotency.not_taken': 'This request does not take an Idempotency-Key: only a POST by a signed-in caller (session or API key) does. Nothing was done; send it again without the header.',
  },
  pt: {
    'idempotency.invalid_key': 'Erro de validação: header.Idempotency-Key: a chave tem de ter de 1 a 255 caracteres ASCII imprimíveis.',
    'idempotency.key_reused': 'Esta Idempotency-Key já foi usada para outro pedido (usada primeiro para {method} {route}; o caminho, a query ou o corpo diferem). Use uma chave nova para um pedido novo.',
    'idempotency.in_progress': 'Um pedido com esta Idempotency-Key ainda está a ser processado. Tente de novo daqui a pouco para receber a sua resposta.',
    'idempotency.response_not_kept': 'O pedido com esta Idempotency-Key foi executado (estado {status}), mas a resposta tinha mais de {max_kib} KiB e não foi guardada; leia o resultado com um GET.',
    'idempotency.not_taken': 'Este pedido não aceita uma Idempotency-Key: só um POST de quem tem sessão iniciada (sessão ou chave de API) a aceita. Nada foi feito; envie-o de novo sem o cabeçalho.',
  },
  es: {
    'idempotency.invalid_key': 'Error de validación: header.Idempotency-Key: la clave debe tener de 1 a 255 caracteres ASCII imprimibles.',
    'idempotency.key_reused': 'Esta Idempotency-Key ya se usó para otra solicitud (primero para {method} {route}; la ruta, la query o el cuerpo difieren). Use una clave nueva para una solicitud nueva.',
    'idempotency.in_progress': 'Una solicitud con esta Idempotency-Key todavía se está procesando. Vuelva a intentarlo en un momento para recibir su respuesta.',
    'idempotency.response_not_kept': 'La solicitud con esta Idempotency-Key se ejecutó (estado {status}), pero su respuesta superaba {max_kib} KiB y no se guardó; lea el resultado con un GET.',
    'idempotency.not_taken': 'Esta solicitud no acepta una Idempotency-Key: solo un POST de quien ha iniciado sesión (sesión o clave de API) la acepta. No se hizo nada; envíela de nuevo sin la cabecera.',
  },
});
