import { z } from 'zod';

/** A hex colour as every edge takes it (preview presets, exports, canvases): #rgb or #rrggbb, any case. */
export const hexColor = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour such as #fff or #1a2b3c');

/** The same colours written as the render reads them: lowercase #rrggbb (#fff → #ffffff). */
export const hexColorRrggbb = hexColor.transform((value) => {
  const digits = value.slice(1).toLowerCase();
  return `#${digits.length === 3 ? [...digits].map((digit) => digit + digit).join('') : digits}`;
});
