import type { IncomingMessage, ServerResponse } from 'node:http';
import { SlackApiFailure, type StoredFile } from './messages.js';
import { bearer, uploadedBytes } from './wire.js';

/**
 * Files in the fake workspace: ones users shared (served at `url_private_download` to the bot
 * token only) and ones the bot uploads (`files.getUploadURLExternal` → POST → `files.completeUploadExternal`).
 */
export class FakeFileStore {
  private readonly files = new Map<string, StoredFile & { isComplete: boolean }>();
  private nextId = 1;

  constructor(
    private readonly baseUrl: () => string,
    private readonly teamId: string,
    private readonly botToken: string,
  ) {}

  bytes(id: string): Uint8Array | undefined {
    return this.files.get(id)?.bytes;
  }

  addUserFile(file: { name: string; mimetype: string; bytes: Uint8Array }): StoredFile {
    const stored = { id: this.newId(), ...file, isComplete: true };
    this.files.set(stored.id, stored);
    return stored;
  }

  /** A file as events carry it. */
  fileObject(file: StoredFile): Record<string, unknown> {
    const path = `${this.baseUrl()}/files-pri/${this.teamId}-${file.id}`;
    return {
      id: file.id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split('.').at(-1) ?? 'binary',
      size: file.bytes.length,
      url_private: `${path}/${encodeURIComponent(file.name)}`,
      url_private_download: `${path}/download/${encodeURIComponent(file.name)}`,
    };
  }

  /** files.getUploadURLExternal. */
  reserveUpload(params: Record<string, unknown>): Record<string, unknown> {
    const length = Number(params.length);
    if (typeof params.filename !== 'string' || !Number.isInteger(length) || length <= 0) throw new SlackApiFailure('invalid_arguments');
    const id = this.newId();
    this.files.set(id, { id, name: params.filename, mimetype: 'application/octet-stream', bytes: new Uint8Array(), isComplete: false });
    return { upload_url: `${this.baseUrl()}/upload/${id}`, file_id: id };
  }

  /** files.completeUploadExternal: the uploaded files, now complete. */
  completeUpload(params: Record<string, unknown>): StoredFile[] {
    const entries = (typeof params.files === 'string' ? JSON.parse(params.files) : params.files) as { id: string; title?: string }[];
    return entries.map((entry) => {
      const file = this.files.get(entry.id);
      if (!file || file.isComplete) throw new SlackApiFailure('file_not_found');
      file.isComplete = true;
      return file;
    });
  }

  /** `POST /upload/<id>`. */
  async receiveUpload(id: string, body: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const file = this.files.get(id);
    if (!file) return void res.writeHead(404).end('not found');
    file.bytes = await uploadedBytes(body, req.headers['content-type']);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${file.bytes.length}`);
  }

  /** `GET /files-pri/…`. */
  serveFile(id: string, req: IncomingMessage, res: ServerResponse): void {
    const file = this.files.get(id);
    // Undocumented: without the bot token Slack answers 200 with an HTML sign-in page, not a 401.
    if (bearer(req) !== this.botToken) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Sign in to Slack</body></html>');
      return;
    }
    if (!file) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': String(file.bytes.length) }).end(Buffer.from(file.bytes));
  }

  private newId(): string {
    return `F${String(this.nextId++).padStart(8, '0')}`;
  }
}
