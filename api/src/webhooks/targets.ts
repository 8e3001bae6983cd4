import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go: only global unicast addresses. An IPv4 address must be plain
 * unicast (not loopback, private RFC 1918, link-local — the cloud metadata address
 * 169.254.169.254 among them —, CGNAT, multicast, broadcast, reserved or documentation);
 * an IPv6 address must lie in the global unicast block 2000::/3 and outside its special
 * ranges (6to4, Teredo, NAT64, documentation, benchmarking, ORCHID…), so every form of IPv4
 * embedded in IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, translated) and every
 * local IPv6 range is refused by the same rule, unless `allowPrivate`
 * (WEBHOOK_ALLOW_PRIVATE_TARGETS) is set. The address is checked at registration and again
 * on every connection, after DNS resolution, so a name that later resolves to an internal
 * address (DNS rebinding) is refused too.
 */
export class TargetRefused extends Error {}

// IANA's global unicast block; everything else in the IPv6 space is local, special or unassigned.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/** Why `address` may not be a target, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && !(parsed as ipaddr.IPv6).match(IPV6_GLOBAL_UNICAST)) {
    const range = parsed.range();
    return range === 'unicast' ? 'outside global unicast (2000::/3)' : range;
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

/** The checks of a URL that need no DNS: scheme, credentials, and a literal address if it is one. */
export function checkTargetUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('only http and https URLs');
  if (url.username || url.password) throw new TargetRefused('credentials in the URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host)) {
    const refused = refusedAddress(host);
    if (refused) throw new TargetRefused(`the address ${host} is ${refused}`);
  }
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) throw new TargetRefused(`the address ${host} is loopback`);
  return url;
}

/** Every address of a host name (the system resolver; tests pass their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (error, found) => (error ? reject(error) : resolve(found))));

/** Resolves every address of `host` and refuses if any is not allowed (registration time). */
export async function checkTargetHost(url: URL, allowPrivate: boolean, resolver: Resolver): Promise<void> {
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return;
  const addresses = await resolver(host).catch(
    (error: unknown) => {
      throw new TargetRefused(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    },
  );
  for (const { address } of addresses) {
    const refused = refusedAddress(address);
    if (refused) throw new TargetRefused(`${host} resolves to ${address}, which is ${refused}`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves the name and refuses the connection when an
 * address is not allowed: the socket connects to the address that was checked.
 */
export function guardedLookup(allowPrivate: boolean, resolver: Resolver) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolver(hostname).then((addresses) => {
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (!allowPrivate) {
        for (const { address } of addresses) {
          const refused = refusedAddress(address);
          if (refused) return callback(Object.assign(new TargetRefused(`${hostname} resolves to ${address}, which is ${refused}`), { code: 'ETARGETREFUSED' }), []);
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    }, (error: unknown) => callback(error as NodeJS.ErrnoException, []));
  };
}
