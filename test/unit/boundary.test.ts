import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The architecture, checked: core (src/) knows no platform, and only config reads the
 * environment. `src/main.ts` is the composition root and may import the platform registry.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PLATFORM_SDKS = ['grammy', '@grammyjs/', '@slack/', 'discord.js', '@discordjs/', '@larksuiteoapi/', 'dingtalk-stream', '@wecom/', '@octokit/'];
/** Entry points that wire everything: the server and the account CLI. */
const COMPOSITION_ROOTS = new Set(['src/main.ts', 'src/cli.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(path: string): string[] {
  const text = readFileSync(join(ROOT, path), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (match) => match[1] as string,
  );
}

describe('architecture boundaries', () => {
  const coreFiles = sourceFiles('src');

  it('finds the core files it checks', () => {
    expect(coreFiles).toContain('src/manager/channel-manager.ts');
  });

  it('core imports no platform SDK', () => {
    const offenders = coreFiles.flatMap((file) =>
      importsOf(file)
        .filter((spec) => PLATFORM_SDKS.some((sdk) => spec === sdk || spec.startsWith(sdk.endsWith('/') ? sdk : `${sdk}/`)))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('core imports nothing from channels/, except the composition root', () => {
    const offenders = coreFiles
      .filter((file) => !COMPOSITION_ROOTS.has(file))
      .flatMap((file) =>
        importsOf(file)
          .filter((spec) => spec.startsWith('.') && relative(ROOT, join(ROOT, file, '..', spec)).startsWith('channels'))
          .map((spec) => `${file} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it('core never branches on a platform name', () => {
    const offenders = coreFiles.filter((file) =>
      /===?\s*['"](telegram|slack|discord|feishu|dingtalk|github)['"]/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('only config and the composition root read the environment', () => {
    const offenders = [...coreFiles, ...sourceFiles('channels')].filter(
      (file) => !file.startsWith('src/config/') && !COMPOSITION_ROOTS.has(file) && /process\.env/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('a platform never imports another platform', () => {
    const platforms = readdirSync(join(ROOT, 'channels')).filter((name) => statSync(join(ROOT, 'channels', name)).isDirectory());
    // Files directly in channels/ are the registry; only platform folders are checked.
    const offenders = sourceFiles('channels').flatMap((file) => {
      const own = file.split('/')[1] as string;
      if (!platforms.includes(own)) return [];
      return importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => relative(ROOT, join(ROOT, file, '..', spec)))
        .filter((target) => platforms.some((p) => p !== own && target.startsWith(`channels/${p}/`)))
        .map((target) => `${file} imports ${target}`);
    });
    expect(offenders).toEqual([]);
  });

  /** Modules the file loads when it loads: static value imports; `import type` and `import()` load nothing yet. */
  function staticImportsOf(path: string): string[] {
    const text = readFileSync(join(ROOT, path), 'utf8');
    return [...text.matchAll(/(?:^|\n)\s*(?:import|export)(?!\s+type\s)[^'"();]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)].map(
      (match) => (match[1] ?? match[2]) as string,
    );
  }

  /** Every package that loading `entry` loads, following our own files' static imports. */
  function packagesLoadedBy(entry: string): Set<string> {
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of staticImportsOf(file)) {
        if (spec.startsWith('.')) visit(relative(ROOT, join(ROOT, file, '..', spec)).replace(/\.js$/, '.ts'));
        else if (!spec.startsWith('node:')) packages.add(spec);
      }
    };
    visit(entry);
    return packages;
  }

  const HEAVY = [...PLATFORM_SDKS, '@langchain/', '@electric-sql/', 'fastify', 'postgres', 'bullmq', 'ioredis', 'prom-client', 'drizzle-orm/'];
  const isHeavy = (spec: string) => HEAVY.some((heavy) => spec === heavy || spec.startsWith(heavy.endsWith('/') ? heavy : `${heavy}/`));

  it('reads arguments and config before loading any SDK, the database or the agent', () => {
    const loaded = packagesLoadedBy('src/main.ts');
    expect(loaded).toContain('zod');
    expect([...loaded].filter(isHeavy)).toEqual([]);
    // The server module main.ts imports once the config is valid does load them.
    expect([...packagesLoadedBy('src/server.ts')]).toEqual(expect.arrayContaining(['fastify', '@electric-sql/pglite', '@langchain/langgraph']));
  });

  it("loads a platform's SDK only when its channel is created", () => {
    const platforms = readdirSync(join(ROOT, 'channels')).filter((name) => statSync(join(ROOT, 'channels', name)).isDirectory());
    expect(platforms.length).toBeGreaterThanOrEqual(6);
    const offenders = platforms.flatMap((platform) =>
      [...packagesLoadedBy(`channels/${platform}/index.ts`)].filter(isHeavy).map((spec) => `channels/${platform}/index.ts loads ${spec}`),
    );
    expect(offenders).toEqual([]);
    // And the adapter it creates does load one: the check above looks at real imports.
    expect([...packagesLoadedBy('channels/telegram/adapter.ts')]).toContain('grammy');
  });
});
