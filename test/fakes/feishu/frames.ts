import protobuf from 'protobufjs';

/** The long connection's binary frame (`pbbp2.Frame`), built with protobufjs as the SDK does. */
const root = protobuf.Root.fromJSON({
  nested: {
    pbbp2: {
      nested: {
        Header: { fields: { key: { type: 'string', id: 1, rule: 'required' }, value: { type: 'string', id: 2, rule: 'required' } } },
        Frame: {
          fields: {
            SeqID: { type: 'uint64', id: 1, rule: 'required' },
            LogID: { type: 'uint64', id: 2, rule: 'required' },
            service: { type: 'int32', id: 3, rule: 'required' },
            method: { type: 'int32', id: 4, rule: 'required' },
            headers: { type: 'Header', id: 5, rule: 'repeated' },
            payloadEncoding: { type: 'string', id: 6 },
            payloadType: { type: 'string', id: 7 },
            payload: { type: 'bytes', id: 8 },
            LogIDNew: { type: 'string', id: 9 },
          },
        },
      },
    },
  },
});
const FrameType = root.lookupType('pbbp2.Frame');

/** 0 = control (ping/pong), 1 = data (events and their acks). */
export const FRAME_METHOD = { control: 0, data: 1 } as const;

export interface Frame {
  SeqID: number;
  LogID: number;
  service: number;
  method: number;
  headers: { key: string; value: string }[];
  payload?: Uint8Array;
}

export function encodeFrame(frame: Frame): Uint8Array {
  return FrameType.encode(FrameType.create(frame)).finish();
}

export function decodeFrame(bytes: Uint8Array): Frame {
  const decoded = FrameType.toObject(FrameType.decode(bytes), { longs: Number, bytes: Uint8Array, defaults: true }) as Frame;
  return decoded;
}

export function headerOf(frame: Frame, key: string): string | undefined {
  return frame.headers.find((h) => h.key === key)?.value;
}
