/** Fills `{name}` placeholders; unknown placeholders stay visible rather than vanish. */
export function fillPlaceholders(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}
