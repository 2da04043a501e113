import { Redis } from 'ioredis';

/** Deletes every key of a test's or bench's deployment (`redis.key_prefix`) from the Redis at `url`. */
export async function deleteRedisKeys(url: string, keyPrefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
