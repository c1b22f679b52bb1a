// A real OTLP/HTTP trace receiver on 127.0.0.1, as a collector would be: it accepts
// `POST /v1/traces` in either encoding the server can send (http/json, http/protobuf), decodes
// each export and keeps its spans for the tests to look at.
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

/** A span as the tests read it: ids in lowercase hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code: number; message?: string };
  resource: Record<string, string | number | boolean>;
  scope: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the exports received, in order. */
  contentTypes: string[];
  close(): Promise<void>;
}

// The parts of the OTLP trace protocol's definitions (opentelemetry-proto: collector/trace/v1,
// trace/v1, common/v1, resource/v1) the tests read, with the official field numbers: protobufjs
// skips the fields left out, as any reader of an older definition would.
const PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  Status status = 15;
  fixed32 flags = 16;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
  }
}
`;
const ExportRequest = protobuf
  .parse(PROTO, { keepCase: false })
  .root.lookupType("otlp.ExportTraceServiceRequest");

type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
};
type KeyValue = { key: string; value?: AnyValue };
type WireSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number | string; message?: string };
};
type WireRequest = {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: WireSpan[] }[];
  }[];
};

function value(v: AnyValue | undefined): string | number | boolean {
  if (!v) return "";
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return "";
}

const attributes = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

/** protobufjs gives bytes as base64 in toObject({ bytes: String }); the JSON encoding gives hex. */
const hexOf = (id: string | undefined, encoding: "hex" | "base64") =>
  !id ? "" : encoding === "hex" ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");

function flatten(request: WireRequest, encoding: "hex" | "base64"): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        out.push({
          traceId: hexOf(span.traceId, encoding),
          spanId: hexOf(span.spanId, encoding),
          parentSpanId: hexOf(span.parentSpanId, encoding),
          name: span.name,
          kind: Number(span.kind ?? 0),
          attributes: attributes(span.attributes),
          status: { code: Number(span.status?.code ?? 0), message: span.status?.message },
          resource,
          scope: ss.scope?.name ?? "",
        });
      }
    }
  }
  return out;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const type = req.headers["content-type"] ?? "";
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    contentTypes.push(type);
    try {
      if (type.startsWith("application/json")) {
        spans.push(...flatten(JSON.parse(body.toString("utf8")) as WireRequest, "hex"));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else if (type.startsWith("application/x-protobuf")) {
        const decoded = ExportRequest.toObject(ExportRequest.decode(body), {
          bytes: String,
          longs: String,
          enums: Number,
        }) as WireRequest;
        spans.push(...flatten(decoded, "base64"));
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      } else {
        res.writeHead(415).end();
      }
    } catch (error) {
      res.writeHead(400).end(String(error));
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
