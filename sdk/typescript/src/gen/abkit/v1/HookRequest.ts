// Original file: ../../proto/abkit/v1/abkit.proto

import type { HTTPRequest as _abkit_v1_HTTPRequest, HTTPRequest__Output as _abkit_v1_HTTPRequest__Output } from '../../abkit/v1/HTTPRequest';
import type { HTTPResponse as _abkit_v1_HTTPResponse, HTTPResponse__Output as _abkit_v1_HTTPResponse__Output } from '../../abkit/v1/HTTPResponse';
import type { ExtensionValue as _abkit_v1_ExtensionValue, ExtensionValue__Output as _abkit_v1_ExtensionValue__Output } from '../../abkit/v1/ExtensionValue';
import type { Outcome as _abkit_v1_Outcome, Outcome__Output as _abkit_v1_Outcome__Output } from '../../abkit/v1/Outcome';
import type { Long } from '@grpc/proto-loader';

export interface HookRequest {
  'instance'?: (number | string | Long);
  'exchange'?: (number | string | Long);
  'direction'?: (string);
  'request'?: (_abkit_v1_HTTPRequest | null);
  'response'?: (_abkit_v1_HTTPResponse | null);
  'extensions'?: (_abkit_v1_ExtensionValue)[];
  'outcome'?: (_abkit_v1_Outcome | null);
  'final'?: (boolean);
  'ctx_err'?: (string);
  'identity_json'?: (Buffer | Uint8Array | string);
}

export interface HookRequest__Output {
  'instance': (string);
  'exchange': (string);
  'direction': (string);
  'request': (_abkit_v1_HTTPRequest__Output | null);
  'response': (_abkit_v1_HTTPResponse__Output | null);
  'extensions': (_abkit_v1_ExtensionValue__Output)[];
  'outcome': (_abkit_v1_Outcome__Output | null);
  'final': (boolean);
  'ctx_err': (string);
  'identity_json': (Buffer);
}
