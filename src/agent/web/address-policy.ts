import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ConfigError } from '../../errors.js';
import { showUrl, WebFetchError } from './errors.js';

export interface AddressPolicyOptions {
  /**
   * Networks the operator lets the server reach although they are not public, as CIDR strings
   * (`10.0.0.0/8`, `127.0.0.1/32`, `fd00::/8`): an intranet wiki, a local docs server.
   */
  allowNetworks: readonly string[];
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const RESERVED = 'a reserved or documentation address';

/** What the model is told an address is, by ipaddr.js range name; anything unlisted is "a special-purpose address". */
const RANGE_NAMES: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  uniqueLocal: 'a unique-local address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  reserved: RESERVED,
  deprecatedSiteLocal: 'a site-local address',
  rfc6052: 'a NAT64 address',
  rfc6145: 'an IPv4-translated address',
  '6to4': 'a 6to4 relay address',
  teredo: 'a Teredo tunnel address',
  benchmarking: 'a benchmarking address',
  discard: 'a discard-only address',
};

/**
 * IANA's global unicast block. ipaddr.js calls everything it has no name for `unicast`, which in
 * IPv6 includes unassigned space and the deprecated IPv4-compatible `::a.b.c.d` form; only this
 * block is routed on the internet.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * Which addresses the server may connect to on the model's behalf: deny by default. Only public
 * unicast addresses pass, plus whatever lies in the operator's `allowNetworks`; loopback, private,
 * link-local (cloud metadata), CGNAT, unique-local, multicast, reserved and documentation ranges do
 * not. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 address it reaches.
 */
export class AddressPolicy {
  private readonly allowed: readonly [Address, number][];

  /** @throws ConfigError naming every entry of `allowNetworks` that is not a CIDR network. */
  constructor(options: AddressPolicyOptions) {
    const issues: string[] = [];
    const allowed: [Address, number][] = [];
    options.allowNetworks.forEach((cidr, index) => {
      const network = parseNetwork(cidr);
      if (network === undefined) {
        issues.push(`allow_networks[${index}]: '${cidr}' is not a CIDR network such as 10.0.0.0/8, 127.0.0.1/32 or fd00::/8`);
      } else {
        allowed.push(network);
      }
    });
    if (issues.length > 0) throw new ConfigError(issues);
    this.allowed = allowed;
  }

  /** True for a public unicast address, or one inside an allowed network; false for anything else, including text that is no address. */
  isAllowed(address: string): boolean {
    return this.refusal(address) === undefined;
  }

  /**
   * Why `address` is refused, as a phrase for the model ("a loopback address"); `undefined` when
   * it is allowed.
   */
  refusal(address: string): string | undefined {
    // Node and the URL parser hand over canonical text; anything else (octal, hex, short forms) is
    // not trusted to mean what ipaddr.js would read into it.
    if (isIP(address) === 0) return 'not an IP address';
    const parsed = ipaddr.parse(address);
    const effective = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
    if (this.isInAllowedNetwork(parsed) || this.isInAllowedNetwork(effective)) return undefined;
    const range = effective.range();
    if (range === 'unicast') {
      return effective instanceof ipaddr.IPv6 && !effective.match(GLOBAL_UNICAST_V6) ? RESERVED : undefined;
    }
    return RANGE_NAMES[range] ?? 'a special-purpose address';
  }

  /**
   * Refuses a URL the server must not fetch: a scheme other than http(s), credentials in the URL,
   * or a host that is an IP literal this policy refuses. Host names pass here; their addresses are
   * checked when the connection is made, so what is checked is what is connected to.
   *
   * @throws WebFetchError saying why.
   */
  checkUrl(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      // The rest of such a URL (a file path) is not repeated back.
      throw new WebFetchError('refused', `${url.protocol} URLs are refused: only http and https URLs are fetched`);
    }
    if (url.username !== '' || url.password !== '') {
      // Not echoed: the URL holds a password.
      throw new WebFetchError('refused', 'URLs with a user name or password are refused; the server sends no credentials');
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    // WHATWG parsing already turned decimal, hex and short IPv4 forms (2130706433, 0x7f.1) into dotted quads.
    if (isIP(host) === 0) return;
    const refusal = this.refusal(host);
    if (refusal !== undefined) {
      throw new WebFetchError('refused', `${showUrl(url)} is refused: ${host} is ${refusal}; the server does not fetch private networks`);
    }
  }

  private isInAllowedNetwork(address: Address): boolean {
    return this.allowed.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
  }
}

/** `undefined` unless `cidr` is `<canonical address>/<prefix length>`. */
function parseNetwork(cidr: string): [Address, number] | undefined {
  const slash = cidr.indexOf('/');
  if (slash < 0 || isIP(cidr.slice(0, slash)) === 0 || !/^\d{1,3}$/.test(cidr.slice(slash + 1))) return undefined;
  try {
    return ipaddr.parseCIDR(cidr);
  } catch {
    return undefined;
  }
}
