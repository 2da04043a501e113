import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { clientVersion, parseIlinkJson } from '../../../../channels/wechat/api.js';
import { wechatConfigSchema } from '../../../../channels/wechat/config.js';
import { decryptAesEcb, encryptAesEcb, paddedSize, parseMediaKey } from '../../../../channels/wechat/crypto.js';

describe('parseIlinkJson', () => {
  it('keeps uint64 ids exact and leaves other numbers and look-alikes in strings alone', () => {
    const raw = '{"msgs":[{"message_id":7230000000000000123,"seq":12,"item_list":[{"msg_id": 9007199254740993,"text_item":{"text":"\\"message_id\\":5"}}]}],"ret":0}';
    expect(parseIlinkJson(raw)).toEqual({
      msgs: [{ message_id: '7230000000000000123', seq: 12, item_list: [{ msg_id: '9007199254740993', text_item: { text: '"message_id":5' } }] }],
      ret: 0,
    });
  });
});

describe('clientVersion', () => {
  it.each([
    ['1.0', 0x010000],
    ['1.0.11', 0x01000b],
    ['2.4.9', 0x020409],
    ['x', 0],
  ])('%s → %i', (version, expected) => {
    expect(clientVersion(version)).toBe(expected);
  });
});

describe('media keys and AES-128-ECB', () => {
  const key = randomBytes(16);
  it.each([
    ['32 hex characters', key.toString('hex')],
    ['base64 of the raw bytes', key.toString('base64')],
    ['base64 of the hex characters', Buffer.from(key.toString('hex'), 'ascii').toString('base64')],
  ])('reads a key given as %s', (_name, encoded) => {
    expect(parseMediaKey(encoded)).toEqual(key);
  });

  it('rejects anything else', () => {
    expect(parseMediaKey('')).toBeUndefined();
    expect(parseMediaKey(randomBytes(24).toString('base64'))).toBeUndefined();
  });

  it.each([0, 1, 15, 16, 17, 1000])('round-trips %i bytes, padded to the next 16', (size) => {
    const plain = randomBytes(size);
    const encrypted = encryptAesEcb(plain, key);
    expect(encrypted.length).toBe(paddedSize(size));
    expect(decryptAesEcb(encrypted, key)).toEqual(plain);
  });
});

describe('wechatConfigSchema', () => {
  it('needs a token or the QR login (with a state_dir) when enabled', () => {
    expect(wechatConfigSchema.safeParse({ enabled: true }).error?.issues.map((i) => i.path.join('.'))).toEqual(['bot_token']);
    expect(wechatConfigSchema.safeParse({ enabled: true, qrcode_login_enabled: true }).error?.issues.map((i) => i.path.join('.'))).toEqual(['state_dir']);
    expect(wechatConfigSchema.safeParse({ enabled: true, qrcode_login_enabled: true, state_dir: '/tmp/x' }).success).toBe(true);
    expect(wechatConfigSchema.parse({})).toMatchObject({ enabled: false, polling_timeout: 35, base_url: 'https://ilinkai.weixin.qq.com' });
  });

  it.each(['polling_timeout', 'polling_retry_delay', 'qrcode_poll_interval', 'qrcode_poll_timeout'])('requires %s to be a positive finite number', (key) => {
    for (const value of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(wechatConfigSchema.safeParse({ [key]: value }).success).toBe(false);
    }
    expect(wechatConfigSchema.safeParse({ [key]: 0.5 }).success).toBe(true);
  });
});
