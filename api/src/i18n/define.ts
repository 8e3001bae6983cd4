/** A feature's messages: the same keys in every language, enforced by the type. */
export function defineMessages<const E extends Record<string, string>>(messages: {
  en: E;
  pt: { [K in keyof E]: string };
  es: { [K in keyof E]: string };
}) {
  return messages;
}
