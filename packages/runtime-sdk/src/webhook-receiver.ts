import { verifyWebhook, WebhookVerificationError } from '@soul-service/webhooks';
import type { IncomingHeaders } from './verify';

/** An event the service delivered to the app's webhook URL, verified (see @soul-service/webhooks for its types). */
export type DeliveredEvent = ReturnType<typeof verifyWebhook>;

export interface DeliveryContext {
  /** False for test events (console, `POST …/webhook/test`) and conformance probes: never act on them. */
  livemode: boolean;
  headers: IncomingHeaders;
  rawBody: Buffer;
}

export interface WebhookReceiverOptions {
  /** The app's webhook secret (`whsec_…`); current and previous during a rotation. */
  secret: string | readonly string[];
  /** Where the service delivers (the path of the app's `webhook_url`). Default `/webhooks`. */
  path?: string;
  /** How far `webhook-timestamp` may be from this clock, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Acknowledges one delivery: return nothing (`{ received: true }` is answered) or the JSON to answer with 200. */
  handler: (event: DeliveredEvent, context: DeliveryContext) => unknown;
}

/**
 * The receiving end of the service's webhook deliveries, over the raw bytes
 * (`X-Service-Signature` and the Standard Webhooks headers, with rotation and
 * tolerance, by @soul-service/webhooks). A refusal answers the status the
 * verifier names (401 for a missing or wrong signature, 500 for a mistake on
 * this side, so the service retries once it is fixed); a handler that throws
 * answers 500 and the delivery is retried.
 */
export class WebhookReceiver {
  readonly path: string;

  constructor(private readonly options: WebhookReceiverOptions) {
    this.path = (options.path ?? '/webhooks').replace(/\/+$/, '');
  }

  matches(path: string): boolean {
    return path.replace(/\/+$/, '').endsWith(this.path);
  }

  async receive(headers: IncomingHeaders, rawBody: Buffer): Promise<{ status: number; body: unknown }> {
    let event: DeliveredEvent;
    try {
      event = verifyWebhook(rawBody, headers, this.options.secret, { toleranceSeconds: this.options.toleranceSeconds });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return { status: error.status, body: { error: { code: error.code, message: error.message } } };
    }
    const livemode = headers['x-service-livemode'] !== 'false';
    const ack = await this.options.handler(event, { livemode, headers, rawBody });
    return { status: 200, body: ack ?? { received: true } };
  }
}
