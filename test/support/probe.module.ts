import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { IsEmail, IsIn, IsInt, IsString, Max, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { ApiError } from '../../src/common/errors/api-error';
import { ProblemError } from '../../src/common/errors/problem-error';

class ProbeInner {
  @IsEmail() to: string;
}

class ProbeBody {
  @IsString() name: string;
  @IsInt() @Min(1) @Max(10) count: number;
  @IsIn(['a', 'b']) kind: string;
  @ValidateNested() @Type(() => ProbeInner) inner: ProbeInner;
}

/** Routes that exist only in tests, to drive each branch of the error filter through real HTTP. */
@Controller()
class ProbeController {
  @Post('v1/probe/echo')
  userEcho(@Body() body: ProbeBody): ProbeBody {
    return body;
  }

  @Post('v1/providers/probe/echo')
  providerEcho(@Body() body: ProbeBody): ProbeBody {
    return body;
  }

  @Get('v1/probe/unauthorized')
  userUnauthorized(): never {
    throw new ApiError('UNAUTHORIZED', 'Missing or invalid bearer token');
  }

  @Get('v1/providers/probe/forbidden')
  providerForbidden(): never {
    throw new ProblemError('insufficient_scope', 'This operation requires the packages:write scope');
  }

  @Get('v1/probe/crash')
  userCrash(): never {
    throw new Error('secret internal detail');
  }

  @Get('v1/providers/probe/crash')
  providerCrash(): never {
    throw new TypeError('secret internal detail');
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
