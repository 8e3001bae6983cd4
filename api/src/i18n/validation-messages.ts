import { defineMessages } from './define.ts';

/**
 * The messages of the schemas' own checks (zod's built-in issues come from zod's locales):
 * a schema names the key (issueKey), the router translates it into the request's language.
 */
export const validationMessages = defineMessages({
  en: {
    'validation.at_most_flags': 'At most {max} flags',
    'validation.colour_rrggbb': 'a #rrggbb colour',
    'validation.json_at_most_bytes': 'at most {max_bytes} bytes of JSON',
    'validation.integer': 'must be an integer',
    'validation.iso_639_1': 'must be an ISO 639-1 code such as en',
    'validation.hex_colour': 'must be a hex colour such as #fff or #1a2b3c',
    'validation.user_id_or_email': 'give exactly one of user_id and email',
  },
  pt: {
    'validation.at_most_flags': 'No máximo {max} indicadores',
    'validation.colour_rrggbb': 'uma cor #rrggbb',
    'validation.json_at_most_bytes': 'no máximo {max_bytes} bytes em JSON',
    'validation.integer': 'deve ser um número inteiro',
    'validation.iso_639_1': 'deve ser um código ISO 639-1, por exemplo pt',
    'validation.hex_colour': 'deve ser uma cor hexadecimal, por exemplo #fff ou #1a2b3c',
    'validation.user_id_or_email': 'indique exatamente um dos campos user_id e email',
  },
  es: {
    'validation.at_most_flags': 'Como máximo {max} indicadores',
    'validation.colour_rrggbb': 'un color #rrggbb',
    'validation.json_at_most_bytes': 'como máximo {max_bytes} bytes en JSON',
    'validation.integer': 'debe ser un número entero',
    'validation.iso_639_1': 'debe ser un código ISO 639-1, por ejemplo es',
    'validation.hex_colour': 'debe ser un color hexadecimal, por ejemplo #fff o #1a2b3c',
    'validation.user_id_or_email': 'indique exactamente uno de los campos user_id y email',
  },
});
