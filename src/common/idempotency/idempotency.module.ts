import { Global, Module } from '@nestjs/common';
import { Idempotency } from './idempotency.service';

@Global()
@Module({ providers: [Idempotency], exports: [Idempotency] })
export class IdempotencyModule {}
