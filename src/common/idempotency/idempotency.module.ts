import { Global, Module } from '@nestjs/common';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { Idempotency } from './idempotency.service';

@Global()
@Module({ providers: [Idempotency, IdempotencyKeysRepository], exports: [Idempotency, IdempotencyKeysRepository] })
export class IdempotencyModule {}
