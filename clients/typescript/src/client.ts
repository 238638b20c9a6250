// A thin typed client of the Swapgate /v1 API. Every path, parameter, body
// and answer type comes from schema.d.ts, which openapi-typescript
// generates from the API document (api/openapi.json; `npm run generate`);
// requests go through openapi-fetch. Nothing here is written by hand but
// the base URL, the X-API-Key header, the unwrapping of the envelope and the
// reading of the status stream's Server-Sent Events (streamStatus).

import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths, webhooks } from "./schema.js";

/** The API document's named schemas: Schemas["QuoteShapeA"], Schemas["OnrampCheckout"], ... */
export type Schemas = components["schemas"];

/** The typed client: client.GET("/v1/quote", { params: { query } }), client.POST(...), ... */
export type SwapgateClient = Client<paths>;

export interface SwapgateOptions {
  /** Where the service answers, e.g. http://127.0.0.1:8080 (a trailing slash is dropped). */
  baseUrl: string;
  /** A partner key (pk_live_…), sent as X-API-Key on every request; without it the anonymous tier. */
  apiKey?: string;
  /** A fetch of one's own (tests, proxies); globalThis.fetch by default. */
  fetch?: ClientOptions["fetch"];
}

/** createSwapgateClient returns an openapi-fetch client typed by the API document. */
export function createSwapgateClient(options: SwapgateOptions): SwapgateClient {
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined && options.apiKey !== "") {
    headers["X-API-Key"] = options.apiKey;
  }
  const init: ClientOptions = { baseUrl: options.baseUrl.replace(/\/+$/, ""), headers };
  if (options.fetch !== undefined) {
    init.fetch = options.fetch;
  }
  return createClient<paths>(init);
}

/** A refusal or failure in the envelope: error.code with its HTTP status. */
export class SwapgateError extends Error {
  override readonly name = "SwapgateError";

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** error.code, or HTTP_<status> when the body was not the envelope. */
    readonly code: string,
    message: string,
    /** error.details, when the service gave any. */
    readonly details: Record<string, unknown> | undefined,
    /** meta.requestId (also X-Request-Id), for the operator's logs. */
    readonly requestId: string | undefined,
  ) {
    super(`${status} ${code}: ${message}${requestId === undefined ? "" : ` (request ${requestId})`}`);
  }
}

/** What a client call resolves to, as openapi-fetch answers it. */
type Answer = { data?: unknown; error?: unknown; response: Response };

/** The envelope's data of a call's success answer. */
export type DataOf<R> = R extends { data: { data: infer D } } ? D : never;

/**
 * unwrap awaits a client call and returns its envelope's data, or throws a
 * SwapgateError with the envelope's error (its code, details and request id):
 *
 *   const { quote, feeBps } = await unwrap(client.GET("/v1/quote", { params: { query } }));
 */
export async function unwrap<R extends Answer>(call: Promise<R> | R): Promise<DataOf<R>> {
  const { data, error, response } = await call;
  if (response.ok && typeof data === "object" && data !== null && "data" in data) {
    return data.data as DataOf<R>;
  }
  throw toError(response, error ?? data);
}

function toError(response: Response, body: unknown): SwapgateError {
  const requestId = response.headers.get("X-Request-Id") ?? undefined;
  if (isErrorEnvelope(body)) {
    const e = body.error;
    return new SwapgateError(response.status, e.code, e.message, e.details, body.meta?.requestId ?? requestId);
  }
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new SwapgateError(response.status, `HTTP_${response.status}`, text ?? response.statusText, undefined, requestId);
}

function isErrorEnvelope(body: unknown): body is Partial<Schemas["ErrorEnvelope"]> & { error: Schemas["Error"] } {
  if (typeof body !== "object" || body === null || !("error" in body)) {
    return false;
  }
  const e = (body as { error: unknown }).error;
  return typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string";
}

/** The query of GET /v1/status/stream: exactly one of txHash, depositAddress (with depositMemo) or orderUid. */
export type StatusStreamQuery = NonNullable<paths["/v1/status/stream"]["get"]["parameters"]["query"]>;

/**
 * One event of GET /v1/status/stream: status (the polled endpoint's data:
 * GET /v1/status, /v1/execute/deposit/status or /v1/onramp/status, by the
 * query), error (the status could not be read any more), done (always last).
 */
export type StatusStreamEvent =
  | { event: "status"; data: Schemas["SwapStatus"] | Schemas["DepositStatus"] | Schemas["OnrampOrder"] }
  | { event: "error"; data: Schemas["Error"] }
  | { event: "done"; data: Schemas["StatusStreamDone"] };

/**
 * streamStatus opens GET /v1/status/stream and yields its events as they
 * come, ending after done (the server then closes the stream); a refusal
 * before the stream throws a SwapgateError. Break out of the loop (or abort
 * signal) to leave early.
 *
 *   for await (const ev of streamStatus({ baseUrl, apiKey }, { txHash })) {
 *     if (ev.event === "status") console.log(ev.data);
 *   }
 */
export async function* streamStatus(
  options: SwapgateOptions & { signal?: AbortSignal },
  query: StatusStreamQuery,
): AsyncGenerator<StatusStreamEvent, void, undefined> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined) {
      params.set(k, String(v));
    }
  }
  const headers: Record<string, string> = { Accept: "text/event-stream" };
  if (options.apiKey !== undefined && options.apiKey !== "") {
    headers["X-API-Key"] = options.apiKey;
  }
  const init: RequestInit = { headers };
  if (options.signal !== undefined) {
    init.signal = options.signal;
  }
  const request = new Request(`${options.baseUrl.replace(/\/+$/, "")}/v1/status/stream?${params.toString()}`, init);
  const response = await (options.fetch ?? globalThis.fetch)(request);
  if (!response.ok || response.body === null) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not the envelope: the text is the message
    }
    throw toError(response, body);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let buffered = "";
    let name = "";
    let data: string[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        return;
      }
      buffered += value;
      // Lines end in LF, CRLF or CR; a CR at the very end may be half of a CRLF.
      const lines = buffered.split(/\r\n|\n|\r(?!$)/);
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "") {
          if (data.length > 0) {
            const ev = { event: name === "" ? "message" : name, data: JSON.parse(data.join("\n")) } as StatusStreamEvent;
            yield ev;
            if (ev.event === "done") {
              return;
            }
          }
          name = "";
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let v = colon < 0 ? "" : line.slice(colon + 1);
          if (v.startsWith(" ")) {
            v = v.slice(1);
          }
          if (field === "event") {
            name = v;
          } else if (field === "data") {
            data.push(v);
          }
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
