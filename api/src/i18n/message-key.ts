/**
 * The keys of the message catalogs, declared here and filled in by catalogs.ts (declaration
 * merging): code that only names a key (shared/errors.ts, and through it the job host) imports
 * this file, not every feature's messages.
 */
export interface MessageKeys {}

export type MessageKey = keyof MessageKeys & string;
