// Original file: ../../proto/abkit/v1/abkit.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { EchoMessage as _abkit_v1_EchoMessage, EchoMessage__Output as _abkit_v1_EchoMessage__Output } from '../../abkit/v1/EchoMessage';

export interface DiagnosticsClient extends grpc.Client {
  Echo(argument: _abkit_v1_EchoMessage, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  Echo(argument: _abkit_v1_EchoMessage, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  Echo(argument: _abkit_v1_EchoMessage, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  Echo(argument: _abkit_v1_EchoMessage, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  echo(argument: _abkit_v1_EchoMessage, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  echo(argument: _abkit_v1_EchoMessage, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  echo(argument: _abkit_v1_EchoMessage, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  echo(argument: _abkit_v1_EchoMessage, callback: grpc.requestCallback<_abkit_v1_EchoMessage__Output>): grpc.ClientUnaryCall;
  
  EchoStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_EchoMessage, _abkit_v1_EchoMessage__Output>;
  EchoStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_EchoMessage, _abkit_v1_EchoMessage__Output>;
  echoStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_EchoMessage, _abkit_v1_EchoMessage__Output>;
  echoStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_EchoMessage, _abkit_v1_EchoMessage__Output>;
  
}

export interface DiagnosticsHandlers extends grpc.UntypedServiceImplementation {
  Echo: grpc.handleUnaryCall<_abkit_v1_EchoMessage__Output, _abkit_v1_EchoMessage>;
  
  EchoStream: grpc.handleBidiStreamingCall<_abkit_v1_EchoMessage__Output, _abkit_v1_EchoMessage>;
  
}

export interface DiagnosticsDefinition extends grpc.ServiceDefinition {
  Echo: MethodDefinition<_abkit_v1_EchoMessage, _abkit_v1_EchoMessage, _abkit_v1_EchoMessage__Output, _abkit_v1_EchoMessage__Output>
  EchoStream: MethodDefinition<_abkit_v1_EchoMessage, _abkit_v1_EchoMessage, _abkit_v1_EchoMessage__Output, _abkit_v1_EchoMessage__Output>
}
