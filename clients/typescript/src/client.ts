// A thin typed client of the Swapgate /v1 API. Every path, parameter, body
// and answer type comes from schema.d.ts, which openapi-typescript
// generates from the API document (api/openapi.json; `npm run generate`);
// requests go through openapi-fetch. Nothing here is written by hand but
// the base URL, the X-API-Key header and the unwrapping of the envelope.

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
