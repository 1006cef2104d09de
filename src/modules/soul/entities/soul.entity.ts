import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('souls')
export class SoulEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text', unique: true }) userId: string;
  @Column({ name: 'communication_style', type: 'text' }) communicationStyle: string;
  @Column('text') humour: string;
  @Column('double precision') formality: number;
  @Column('double precision') empathy: number;
  @Column('text', { array: true }) values: string[];
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
