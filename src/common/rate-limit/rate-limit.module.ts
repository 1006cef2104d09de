import { Global, Module } from '@nestjs/common';
import { RateLimits } from './rate-limits.service';
import { AddressRateLimitGuard, UserRateLimitGuard } from './user-rate-limit.guard';

@Global()
@Module({
  providers: [RateLimits, UserRateLimitGuard, AddressRateLimitGuard],
  exports: [RateLimits, UserRateLimitGuard, AddressRateLimitGuard],
})
export class RateLimitModule {}
