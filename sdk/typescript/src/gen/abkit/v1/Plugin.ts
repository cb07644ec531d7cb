// Original file: ../../proto/abkit/v1/abkit.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DescribeRequest as _abkit_v1_DescribeRequest, DescribeRequest__Output as _abkit_v1_DescribeRequest__Output } from '../../abkit/v1/DescribeRequest';
import type { DescribeResponse as _abkit_v1_DescribeResponse, DescribeResponse__Output as _abkit_v1_DescribeResponse__Output } from '../../abkit/v1/DescribeResponse';
import type { Empty as _abkit_v1_Empty, Empty__Output as _abkit_v1_Empty__Output } from '../../abkit/v1/Empty';
import type { FrameRequest as _abkit_v1_FrameRequest, FrameRequest__Output as _abkit_v1_FrameRequest__Output } from '../../abkit/v1/FrameRequest';
import type { FrameResponse as _abkit_v1_FrameResponse, FrameResponse__Output as _abkit_v1_FrameResponse__Output } from '../../abkit/v1/FrameResponse';
import type { HookRequest as _abkit_v1_HookRequest, HookRequest__Output as _abkit_v1_HookRequest__Output } from '../../abkit/v1/HookRequest';
import type { HookResponse as _abkit_v1_HookResponse, HookResponse__Output as _abkit_v1_HookResponse__Output } from '../../abkit/v1/HookResponse';
import type { InstanceRequest as _abkit_v1_InstanceRequest, InstanceRequest__Output as _abkit_v1_InstanceRequest__Output } from '../../abkit/v1/InstanceRequest';
import type { InterceptRequest as _abkit_v1_InterceptRequest, InterceptRequest__Output as _abkit_v1_InterceptRequest__Output } from '../../abkit/v1/InterceptRequest';
import type { InterceptResponse as _abkit_v1_InterceptResponse, InterceptResponse__Output as _abkit_v1_InterceptResponse__Output } from '../../abkit/v1/InterceptResponse';
import type { NewInstanceRequest as _abkit_v1_NewInstanceRequest, NewInstanceRequest__Output as _abkit_v1_NewInstanceRequest__Output } from '../../abkit/v1/NewInstanceRequest';
import type { NewInstanceResponse as _abkit_v1_NewInstanceResponse, NewInstanceResponse__Output as _abkit_v1_NewInstanceResponse__Output } from '../../abkit/v1/NewInstanceResponse';
import type { NotifyRequest as _abkit_v1_NotifyRequest, NotifyRequest__Output as _abkit_v1_NotifyRequest__Output } from '../../abkit/v1/NotifyRequest';
import type { PartRequest as _abkit_v1_PartRequest, PartRequest__Output as _abkit_v1_PartRequest__Output } from '../../abkit/v1/PartRequest';
import type { PartResponse as _abkit_v1_PartResponse, PartResponse__Output as _abkit_v1_PartResponse__Output } from '../../abkit/v1/PartResponse';
import type { ReleaseRequest as _abkit_v1_ReleaseRequest, ReleaseRequest__Output as _abkit_v1_ReleaseRequest__Output } from '../../abkit/v1/ReleaseRequest';
import type { Status as _abkit_v1_Status, Status__Output as _abkit_v1_Status__Output } from '../../abkit/v1/Status';
import type { SubmitRequest as _abkit_v1_SubmitRequest, SubmitRequest__Output as _abkit_v1_SubmitRequest__Output } from '../../abkit/v1/SubmitRequest';
import type { SubmitResponse as _abkit_v1_SubmitResponse, SubmitResponse__Output as _abkit_v1_SubmitResponse__Output } from '../../abkit/v1/SubmitResponse';
import type { ToolRequest as _abkit_v1_ToolRequest, ToolRequest__Output as _abkit_v1_ToolRequest__Output } from '../../abkit/v1/ToolRequest';
import type { ToolResponse as _abkit_v1_ToolResponse, ToolResponse__Output as _abkit_v1_ToolResponse__Output } from '../../abkit/v1/ToolResponse';

export interface PluginClient extends grpc.Client {
  Describe(argument: _abkit_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _abkit_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _abkit_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _abkit_v1_DescribeRequest, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _abkit_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _abkit_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _abkit_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _abkit_v1_DescribeRequest, callback: grpc.requestCallback<_abkit_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  
  Finish(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  Finish(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  Finish(argument: _abkit_v1_HookRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  Finish(argument: _abkit_v1_HookRequest, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _abkit_v1_HookRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _abkit_v1_HookRequest, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  
  Frames(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_FrameRequest, _abkit_v1_FrameResponse__Output>;
  Frames(options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_FrameRequest, _abkit_v1_FrameResponse__Output>;
  frames(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_FrameRequest, _abkit_v1_FrameResponse__Output>;
  frames(options?: grpc.CallOptions): grpc.ClientDuplexStream<_abkit_v1_FrameRequest, _abkit_v1_FrameResponse__Output>;
  
  Init(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Init(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Init(argument: _abkit_v1_InstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Init(argument: _abkit_v1_InstanceRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  init(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  init(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  init(argument: _abkit_v1_InstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  init(argument: _abkit_v1_InstanceRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  
  Intercept(argument: _abkit_v1_InterceptRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  Intercept(argument: _abkit_v1_InterceptRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  Intercept(argument: _abkit_v1_InterceptRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  Intercept(argument: _abkit_v1_InterceptRequest, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  intercept(argument: _abkit_v1_InterceptRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  intercept(argument: _abkit_v1_InterceptRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  intercept(argument: _abkit_v1_InterceptRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  intercept(argument: _abkit_v1_InterceptRequest, callback: grpc.requestCallback<_abkit_v1_InterceptResponse__Output>): grpc.ClientUnaryCall;
  
  NewInstance(argument: _abkit_v1_NewInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  NewInstance(argument: _abkit_v1_NewInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  NewInstance(argument: _abkit_v1_NewInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  NewInstance(argument: _abkit_v1_NewInstanceRequest, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  newInstance(argument: _abkit_v1_NewInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  newInstance(argument: _abkit_v1_NewInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  newInstance(argument: _abkit_v1_NewInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  newInstance(argument: _abkit_v1_NewInstanceRequest, callback: grpc.requestCallback<_abkit_v1_NewInstanceResponse__Output>): grpc.ClientUnaryCall;
  
  Notify(argument: _abkit_v1_NotifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Notify(argument: _abkit_v1_NotifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Notify(argument: _abkit_v1_NotifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Notify(argument: _abkit_v1_NotifyRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  notify(argument: _abkit_v1_NotifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  notify(argument: _abkit_v1_NotifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  notify(argument: _abkit_v1_NotifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  notify(argument: _abkit_v1_NotifyRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  
  OnRequest(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  OnRequest(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  OnRequest(argument: _abkit_v1_HookRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  OnRequest(argument: _abkit_v1_HookRequest, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onRequest(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onRequest(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onRequest(argument: _abkit_v1_HookRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onRequest(argument: _abkit_v1_HookRequest, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  
  OnResponse(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  OnResponse(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  OnResponse(argument: _abkit_v1_HookRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  OnResponse(argument: _abkit_v1_HookRequest, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onResponse(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onResponse(argument: _abkit_v1_HookRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onResponse(argument: _abkit_v1_HookRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  onResponse(argument: _abkit_v1_HookRequest, callback: grpc.requestCallback<_abkit_v1_HookResponse__Output>): grpc.ClientUnaryCall;
  
  Part(argument: _abkit_v1_PartRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  Part(argument: _abkit_v1_PartRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  Part(argument: _abkit_v1_PartRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  Part(argument: _abkit_v1_PartRequest, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  part(argument: _abkit_v1_PartRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  part(argument: _abkit_v1_PartRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  part(argument: _abkit_v1_PartRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  part(argument: _abkit_v1_PartRequest, callback: grpc.requestCallback<_abkit_v1_PartResponse__Output>): grpc.ClientUnaryCall;
  
  Ready(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Ready(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Ready(argument: _abkit_v1_InstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Ready(argument: _abkit_v1_InstanceRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  ready(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  ready(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  ready(argument: _abkit_v1_InstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  ready(argument: _abkit_v1_InstanceRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  
  Release(argument: _abkit_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  Release(argument: _abkit_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  Release(argument: _abkit_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  Release(argument: _abkit_v1_ReleaseRequest, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  release(argument: _abkit_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  release(argument: _abkit_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  release(argument: _abkit_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  release(argument: _abkit_v1_ReleaseRequest, callback: grpc.requestCallback<_abkit_v1_Empty__Output>): grpc.ClientUnaryCall;
  
  Shutdown(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Shutdown(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Shutdown(argument: _abkit_v1_InstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  Shutdown(argument: _abkit_v1_InstanceRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _abkit_v1_InstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _abkit_v1_InstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  shutdown(argument: _abkit_v1_InstanceRequest, callback: grpc.requestCallback<_abkit_v1_Status__Output>): grpc.ClientUnaryCall;
  
  Submit(argument: _abkit_v1_SubmitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  Submit(argument: _abkit_v1_SubmitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  Submit(argument: _abkit_v1_SubmitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  Submit(argument: _abkit_v1_SubmitRequest, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  submit(argument: _abkit_v1_SubmitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  submit(argument: _abkit_v1_SubmitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  submit(argument: _abkit_v1_SubmitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  submit(argument: _abkit_v1_SubmitRequest, callback: grpc.requestCallback<_abkit_v1_SubmitResponse__Output>): grpc.ClientUnaryCall;
  
  Tool(argument: _abkit_v1_ToolRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  Tool(argument: _abkit_v1_ToolRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  Tool(argument: _abkit_v1_ToolRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  Tool(argument: _abkit_v1_ToolRequest, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  tool(argument: _abkit_v1_ToolRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  tool(argument: _abkit_v1_ToolRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  tool(argument: _abkit_v1_ToolRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  tool(argument: _abkit_v1_ToolRequest, callback: grpc.requestCallback<_abkit_v1_ToolResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface PluginHandlers extends grpc.UntypedServiceImplementation {
  Describe: grpc.handleUnaryCall<_abkit_v1_DescribeRequest__Output, _abkit_v1_DescribeResponse>;
  
  Finish: grpc.handleUnaryCall<_abkit_v1_HookRequest__Output, _abkit_v1_HookResponse>;
  
  Frames: grpc.handleBidiStreamingCall<_abkit_v1_FrameRequest__Output, _abkit_v1_FrameResponse>;
  
  Init: grpc.handleUnaryCall<_abkit_v1_InstanceRequest__Output, _abkit_v1_Status>;
  
  Intercept: grpc.handleUnaryCall<_abkit_v1_InterceptRequest__Output, _abkit_v1_InterceptResponse>;
  
  NewInstance: grpc.handleUnaryCall<_abkit_v1_NewInstanceRequest__Output, _abkit_v1_NewInstanceResponse>;
  
  Notify: grpc.handleUnaryCall<_abkit_v1_NotifyRequest__Output, _abkit_v1_Status>;
  
  OnRequest: grpc.handleUnaryCall<_abkit_v1_HookRequest__Output, _abkit_v1_HookResponse>;
  
  OnResponse: grpc.handleUnaryCall<_abkit_v1_HookRequest__Output, _abkit_v1_HookResponse>;
  
  Part: grpc.handleUnaryCall<_abkit_v1_PartRequest__Output, _abkit_v1_PartResponse>;
  
  Ready: grpc.handleUnaryCall<_abkit_v1_InstanceRequest__Output, _abkit_v1_Status>;
  
  Release: grpc.handleUnaryCall<_abkit_v1_ReleaseRequest__Output, _abkit_v1_Empty>;
  
  Shutdown: grpc.handleUnaryCall<_abkit_v1_InstanceRequest__Output, _abkit_v1_Status>;
  
  Submit: grpc.handleUnaryCall<_abkit_v1_SubmitRequest__Output, _abkit_v1_SubmitResponse>;
  
  Tool: grpc.handleUnaryCall<_abkit_v1_ToolRequest__Output, _abkit_v1_ToolResponse>;
  
}

export interface PluginDefinition extends grpc.ServiceDefinition {
  Describe: MethodDefinition<_abkit_v1_DescribeRequest, _abkit_v1_DescribeResponse, _abkit_v1_DescribeRequest__Output, _abkit_v1_DescribeResponse__Output>
  Finish: MethodDefinition<_abkit_v1_HookRequest, _abkit_v1_HookResponse, _abkit_v1_HookRequest__Output, _abkit_v1_HookResponse__Output>
  Frames: MethodDefinition<_abkit_v1_FrameRequest, _abkit_v1_FrameResponse, _abkit_v1_FrameRequest__Output, _abkit_v1_FrameResponse__Output>
  Init: MethodDefinition<_abkit_v1_InstanceRequest, _abkit_v1_Status, _abkit_v1_InstanceRequest__Output, _abkit_v1_Status__Output>
  Intercept: MethodDefinition<_abkit_v1_InterceptRequest, _abkit_v1_InterceptResponse, _abkit_v1_InterceptRequest__Output, _abkit_v1_InterceptResponse__Output>
  NewInstance: MethodDefinition<_abkit_v1_NewInstanceRequest, _abkit_v1_NewInstanceResponse, _abkit_v1_NewInstanceRequest__Output, _abkit_v1_NewInstanceResponse__Output>
  Notify: MethodDefinition<_abkit_v1_NotifyRequest, _abkit_v1_Status, _abkit_v1_NotifyRequest__Output, _abkit_v1_Status__Output>
  OnRequest: MethodDefinition<_abkit_v1_HookRequest, _abkit_v1_HookResponse, _abkit_v1_HookRequest__Output, _abkit_v1_HookResponse__Output>
  OnResponse: MethodDefinition<_abkit_v1_HookRequest, _abkit_v1_HookResponse, _abkit_v1_HookRequest__Output, _abkit_v1_HookResponse__Output>
  Part: MethodDefinition<_abkit_v1_PartRequest, _abkit_v1_PartResponse, _abkit_v1_PartRequest__Output, _abkit_v1_PartResponse__Output>
  Ready: MethodDefinition<_abkit_v1_InstanceRequest, _abkit_v1_Status, _abkit_v1_InstanceRequest__Output, _abkit_v1_Status__Output>
  Release: MethodDefinition<_abkit_v1_ReleaseRequest, _abkit_v1_Empty, _abkit_v1_ReleaseRequest__Output, _abkit_v1_Empty__Output>
  Shutdown: MethodDefinition<_abkit_v1_InstanceRequest, _abkit_v1_Status, _abkit_v1_InstanceRequest__Output, _abkit_v1_Status__Output>
  Submit: MethodDefinition<_abkit_v1_SubmitRequest, _abkit_v1_SubmitResponse, _abkit_v1_SubmitRequest__Output, _abkit_v1_SubmitResponse__Output>
  Tool: MethodDefinition<_abkit_v1_ToolRequest, _abkit_v1_ToolResponse, _abkit_v1_ToolRequest__Output, _abkit_v1_ToolResponse__Output>
}
