/** Which page of a list a caller asks for (the HTTP layer parses and bounds it). */
export interface PageRequest {
  page: number;
  items_per_page: number;
}

/** One page of a list and the size of the whole, as services return it. */
export interface PageOfRows<T> {
  rows: T[];
  total: number;
}

/** The row offset of a page. */
export const offsetOf = (request: PageRequest) => (request.page - 1) * request.items_per_page;
