import { ApiProperty } from '@nestjs/swagger';
import { METRIC_WINDOW_NAMES } from '../../../common/metrics/metric-windows';

export class EndpointDeliveryMetricsDto {
  @ApiProperty() endpoint_id: string;
  @ApiProperty({ description: "The app's first endpoint: the spec's webhook profile" }) is_primary: boolean;
  @ApiProperty({ type: 'integer', description: 'Deliveries created in the window (test events and replays included)' }) deliveries: number;
  @ApiProperty({ type: 'integer' }) delivered: number;
  @ApiProperty({ type: 'integer', description: 'Failed for good: retries spent, or the endpoint refused them' }) failed: number;
  @ApiProperty({ type: 'integer', description: 'Not settled yet: waiting for their next attempt' }) pending: number;
  @ApiProperty({ type: 'integer', description: 'Attempts made for these deliveries' }) attempts: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'delivered / (delivered + failed), 0 to 1 with four decimals; null when none has settled',
  })
  success_rate: number | null;
}

export class DeliveryMetricsDto {
  @ApiProperty() app_id: string;
  @ApiProperty({ enum: METRIC_WINDOW_NAMES }) window: string;
  @ApiProperty({ format: 'date-time', description: 'Start of the window' }) from: string;
  @ApiProperty({ format: 'date-time', description: 'End of the window (end of the current bucket)' }) to: string;
  @ApiProperty({ type: [EndpointDeliveryMetricsDto], description: 'Every endpoint of the app, primary first' })
  endpoints: EndpointDeliveryMetricsDto[];
}
