import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../../../src/gateway/types.js';
import { buildTestApp, healthyReport } from '../stub-runtime.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
});

describe('GET /health', () => {
  it('answers 200 with the report when everything is up', async () => {
    ({ app } = await buildTestApp({ health: async () => healthyReport }));
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(healthyReport);
  });

  it('answers 503 with the report when the database is down', async () => {
    const down: HealthReport = {
      ...healthyReport,
      ok: false,
      database: { ok: false, kind: 'postgres', error: 'unreachable' },
      channels: { slack: { running: false, reason: 'disabled' } },
    };
    ({ app } = await buildTestApp({ health: async () => down }));
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual(down);
  });

  it('reports how shells are isolated, and why not when they are not', async () => {
    const unsandboxed: HealthReport = {
      ...healthyReport,
      sandbox: { isolation: 'none', isExplicit: false, reason: 'bwrap was not found (install the bubblewrap package)' },
    };
    ({ app } = await buildTestApp({ health: async () => unsandboxed }));
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json().sandbox).toEqual(unsandboxed.sandbox);
  });
});
