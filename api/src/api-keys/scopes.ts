import type { ApiKeyScope } from './service.ts';

/** Routes about plans and money: a key needs `billing` for them, whatever the method. */
const BILLING_ROUTES = ['/api/v1/payments/', '/api/v1/users/me/billing', '/api/v1/users/me/activate-trial', '/api/v1/admin/beta/'];

/**
 * The scope a key needs for a request: `billing` on the billing and payments routes,
 * else `read` for GET and HEAD and `write` for every other method. (What no key may do at
 * all, such as managing keys or deleting the account, is marked on the route itself.)
 */
export function requiredScope(method: string, routeTemplate: string | undefined): ApiKeyScope {
  if (routeTemplate && BILLING_ROUTES.some((prefix) => routeTemplate.startsWith(prefix))) return 'billing';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}
