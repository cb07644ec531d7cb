import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { DiagnosticsClient as _abkit_v1_DiagnosticsClient, DiagnosticsDefinition as _abkit_v1_DiagnosticsDefinition } from './abkit/v1/Diagnostics';
import type { PluginClient as _abkit_v1_PluginClient, PluginDefinition as _abkit_v1_PluginDefinition } from './abkit/v1/Plugin';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  abkit: {
    v1: {
      Action: MessageTypeDefinition
      BodyWrite: MessageTypeDefinition
      Capabilities: MessageTypeDefinition
      DescribeRequest: MessageTypeDefinition
      DescribeResponse: MessageTypeDefinition
      Diagnostics: SubtypeConstructor<typeof grpc.Client, _abkit_v1_DiagnosticsClient> & { service: _abkit_v1_DiagnosticsDefinition }
      EchoMessage: MessageTypeDefinition
      Empty: MessageTypeDefinition
      ExtensionSpec: MessageTypeDefinition
      ExtensionValue: MessageTypeDefinition
      FrameRequest: MessageTypeDefinition
      FrameResponse: MessageTypeDefinition
      HTTPRequest: MessageTypeDefinition
      HTTPResponse: MessageTypeDefinition
      Header: MessageTypeDefinition
      HeaderDelta: MessageTypeDefinition
      HookError: MessageTypeDefinition
      HookRequest: MessageTypeDefinition
      HookResponse: MessageTypeDefinition
      HookSpec: MessageTypeDefinition
      InstanceRequest: MessageTypeDefinition
      InterceptRequest: MessageTypeDefinition
      InterceptResponse: MessageTypeDefinition
      Manifest: MessageTypeDefinition
      NewInstanceRequest: MessageTypeDefinition
      NewInstanceResponse: MessageTypeDefinition
      NotifyRequest: MessageTypeDefinition
      Outcome: MessageTypeDefinition
      PartRequest: MessageTypeDefinition
      PartResponse: MessageTypeDefinition
      PipelineInfo: MessageTypeDefinition
      Plugin: SubtypeConstructor<typeof grpc.Client, _abkit_v1_PluginClient> & { service: _abkit_v1_PluginDefinition }
      Rejection: MessageTypeDefinition
      ReleaseRequest: MessageTypeDefinition
      Status: MessageTypeDefinition
      SubmitRequest: MessageTypeDefinition
      SubmitResponse: MessageTypeDefinition
      ToolRequest: MessageTypeDefinition
      ToolResponse: MessageTypeDefinition
    }
  }
}

