import { z } from 'zod';
import { issueKey } from '../i18n/index.ts';

/** A hex colour as every edge takes it (preview presets, exports, canvases): #rgb or #rrggbb, any case. */
export const hexColor = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, issueKey('validation.hex_colour'));

/** The same colours written as the render reads them: lowercase #rrggbb (#fff → #ffffff). */
export const hexColorRrggbb = hexColor.transform((value) => {
  const digits = value.slice(1).toLowerCase();
  return `#${digits.length === 3 ? [...digits].map((digit) => digit + digit).join('') : digits}`;
});
