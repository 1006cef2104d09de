import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';

class DevelopmentSignInDto {
  @ApiProperty({ example: '/dev-idp/sign-in' }) sign_in_url: string;
}

class FirebaseWebConfigDto {
  @ApiProperty({ description: 'Public: identifies the Firebase project, grants nothing' }) apiKey: string;
  @ApiProperty({ example: 'acme.firebaseapp.com' }) authDomain: string;
  @ApiProperty() projectId: string;
}

/** How /app signs a person in; the page reads it before showing its first screen. */
export class SignInConfigDto {
  @ApiProperty({
    enum: ['firebase', 'development', 'token'],
    description:
      '`firebase`: Firebase Authentication web sign-in; `development`: the development identity provider (DEV_IDP); `token`: paste an ID token',
  })
  method: 'firebase' | 'development' | 'token';
  @ApiPropertyOptional({ type: DevelopmentSignInDto }) development?: DevelopmentSignInDto;
  @ApiPropertyOptional({ type: FirebaseWebConfigDto }) firebase?: FirebaseWebConfigDto;
}

/** `GET /app/config.json`: served beside the /app pages, read by them before their first screen. */
@ApiTags('auth')
@Controller('app')
export class SignInConfigController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('config.json')
  @Header('cache-control', 'no-cache')
  @ApiOperation({ summary: 'How the consumer app signs people in (Firebase, development or pasted token)' })
  @ApiOkResponse({ type: SignInConfigDto })
  signIn(): SignInConfigDto {
    if (this.config.firebaseWeb) return { method: 'firebase', firebase: this.config.firebaseWeb };
    if (this.config.devIdp) return { method: 'development', development: { sign_in_url: '/dev-idp/sign-in' } };
    return { method: 'token' };
  }
}
