import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp } from '../stub-runtime.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
});

describe('GET /api/models', () => {
  it('lists models by name, model id, thinking and whether they see images, nothing else', async () => {
    const built = await buildTestApp();
    app = built.app;
    built.runtime.modelList = [
      { name: 'default', model: 'gpt-4o-mini' },
      { name: 'local', model: 'llama3', base_url: 'http://x', api_key: 'sk-secret' } as never,
      { name: 'qwen3', model: 'qwen3-32b', thinking: 'on' },
      { name: 'vision', model: 'gpt-4o', supports_vision: true },
    ];
    const response = await app.inject({ method: 'GET', url: '/api/models' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      models: [
        { name: 'default', model: 'gpt-4o-mini' },
        { name: 'local', model: 'llama3' },
        { name: 'qwen3', model: 'qwen3-32b', thinking: 'on' },
        { name: 'vision', model: 'gpt-4o', supports_vision: true },
      ],
    });
  });
});
