import { describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../../../src/agent/web/address-policy.js';
import { WebFetchError } from '../../../../src/agent/web/guarded-fetch.js';
import { ConfigError } from '../../../../src/errors.js';

const denyAll = new AddressPolicy({ allowNetworks: [] });

describe('AddressPolicy.isAllowed', () => {
  it.each([
    ['127.0.0.1', false],
    ['127.0.0.2', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.1', false],
    ['192.0.2.1', false],
    ['198.51.100.7', false],
    ['203.0.113.9', false],
    ['240.0.0.1', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fe80::1%eth0', false],
    ['fc00::1', false],
    ['fd12::1', false],
    ['ff02::1', false],
    ['2001:db8::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['64:ff9b::7f00:1', false],
    ['::7f00:1', false],
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['::ffff:8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['not an address', false],
    ['0x7f.1', false],
    ['', false],
  ])('%s → %s', (address, expected) => {
    expect(denyAll.isAllowed(address)).toBe(expected);
  });

  it('names why an address is refused', () => {
    expect(denyAll.refusal('127.0.0.1')).toBe('a loopback address');
    expect(denyAll.refusal('169.254.169.254')).toBe('a link-local address');
    expect(denyAll.refusal('100.64.0.1')).toBe('a carrier-grade NAT address');
    expect(denyAll.refusal('::ffff:10.0.0.1')).toBe('a private address');
    expect(denyAll.refusal('8.8.8.8')).toBeUndefined();
  });
});

describe('AddressPolicy allow-list', () => {
  const policy = new AddressPolicy({ allowNetworks: ['127.0.0.1/32', '10.0.0.0/8'] });

  it('lets the listed networks through, and only those', () => {
    expect(policy.isAllowed('127.0.0.1')).toBe(true);
    expect(policy.isAllowed('10.9.9.9')).toBe(true);
    expect(policy.isAllowed('::ffff:10.9.9.9')).toBe(true);
    expect(policy.isAllowed('127.0.0.2')).toBe(false);
    expect(policy.isAllowed('192.168.1.1')).toBe(false);
    expect(policy.isAllowed('::1')).toBe(false);
    expect(policy.isAllowed('8.8.8.8')).toBe(true);
  });

  it('takes IPv6 networks', () => {
    const v6 = new AddressPolicy({ allowNetworks: ['fd00::/8'] });
    expect(v6.isAllowed('fd12::1')).toBe(true);
    expect(v6.isAllowed('fc00::1')).toBe(false);
  });

  it.each(['10.0.0.0', '10.0.0.0/33', '10.0.0.0/x', 'fd00::/129', 'example.com/8', '0x7f.1/32', '', '10.0.0.0/8/8'])(
    'refuses %j as a network with a ConfigError',
    (cidr) => {
      expect(() => new AddressPolicy({ allowNetworks: ['127.0.0.1/32', cidr] })).toThrow(ConfigError);
    },
  );

  it('names the entry that is wrong', () => {
    try {
      new AddressPolicy({ allowNetworks: ['127.0.0.1/32', 'nonsense'] });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).issues).toEqual([expect.stringContaining("allow_networks[1]: 'nonsense'")]);
    }
  });
});

describe('AddressPolicy.checkUrl', () => {
  const refusal = (url: string, policy = denyAll): WebFetchError => {
    try {
      policy.checkUrl(new URL(url));
    } catch (error) {
      expect(error).toBeInstanceOf(WebFetchError);
      return error as WebFetchError;
    }
    throw new Error(`${url} was not refused`);
  };

  it.each([
    ['file:///etc/passwd', 'file: URLs are refused'],
    ['ftp://x', 'ftp: URLs are refused'],
    ['javascript:alert(1)', 'javascript: URLs are refused'],
    ['http://user:pw@example.com/', 'user name or password'],
    ['http://user@example.com/', 'user name or password'],
    ['http://[::1]/', '::1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]/', 'is a loopback address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    // WHATWG URL parsing turns the decimal, hex and short forms into 127.0.0.1 before the check.
    ['http://2130706433/', '127.0.0.1 is a loopback address'],
    ['http://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['http://127.1/', '127.0.0.1 is a loopback address'],
    ['http://127.0.0.1./', '127.0.0.1 is a loopback address'],
    ['https://10.0.0.1:8443/admin', '10.0.0.1 is a private address'],
  ])('refuses %s', (url, reason) => {
    const error = refusal(url);
    expect(error.message).toContain(reason);
    expect(error.failure).toBe('refused');
    expect(error.userMessage).toBe(error.message);
  });

  it('does not repeat a file path or a password back', () => {
    expect(refusal('file:///etc/passwd').message).not.toContain('/etc');
    expect(refusal('http://user:hunter2@example.com/').message).not.toContain('hunter2');
  });

  it('leaves host names to the connect-time check and lets public literals through', () => {
    expect(() => denyAll.checkUrl(new URL('http://localhost:8080/'))).not.toThrow();
    expect(() => denyAll.checkUrl(new URL('https://example.com/a?b=c'))).not.toThrow();
    expect(() => denyAll.checkUrl(new URL('http://8.8.8.8/'))).not.toThrow();
    expect(() => denyAll.checkUrl(new URL('http://[2606:4700:4700::1111]/'))).not.toThrow();
  });

  it('lets an allowed private literal through', () => {
    const policy = new AddressPolicy({ allowNetworks: ['127.0.0.1/32', '10.0.0.0/8'] });
    expect(() => policy.checkUrl(new URL('http://127.0.0.1:8080/'))).not.toThrow();
    expect(() => policy.checkUrl(new URL('http://10.9.9.9/'))).not.toThrow();
    expect(refusal('http://127.0.0.2/', policy).message).toContain('127.0.0.2 is a loopback address');
  });
});
