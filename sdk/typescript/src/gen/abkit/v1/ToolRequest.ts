// Original file: ../../proto/abkit/v1/abkit.proto


export interface ToolRequest {
  'hook'?: (number);
  'event_json'?: (Buffer | Uint8Array | string);
}

export interface ToolRequest__Output {
  'hook': (number);
  'event_json': (Buffer);
}
