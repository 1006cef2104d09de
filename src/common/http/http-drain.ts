import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';

/**
 * Knows when the api is draining. Nest closes the HTTP server after
 * `beforeApplicationShutdown`; responses sent from then on carry
 * `Connection: close`, so keep-alive clients let go and the close completes as
 * soon as in-flight requests are answered instead of waiting on idle sockets.
 */
@Injectable()
export class HttpDrain implements BeforeApplicationShutdown {
  draining = false;

  beforeApplicationShutdown(): void {
    this.draining = true;
  }
}
