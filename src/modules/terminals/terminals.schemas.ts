import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid } from '../../shared/wire.js';
import { PageQuery } from '../../shared/pagination.js';
import { PointOfSaleRecord } from '../points-of-sale/points-of-sale.schemas.js';

export const TerminalRecord = Type.Object({
  id: Uuid,
  pointOfSaleId: Uuid,
  deviceId: Nullable(Type.String()),
  externalId: Nullable(Type.String()),
  name: Nullable(Type.String()),
  fallback: Type.Boolean(),
  createdAt: DateTime,
});
export const DeviceRecord = Type.Object({ id: Type.String(), description: Type.String(), createdAt: DateTime });
export const TerminalResponse = Type.Object({ terminal: TerminalRecord, pointOfSale: PointOfSaleRecord, device: Nullable(DeviceRecord) });
export const CreateTerminalBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  fallback: Type.Optional(Type.Boolean({ description: 'Route sales without terminal.id here. The first terminal is the fallback unless another is named.' })),
});
export const TerminalParams = Type.Object({ terminalId: Uuid });
export const TerminalListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    pointOfSaleId: Type.Optional(Uuid),
    deviceId: Type.Optional(Type.String({ format: 'uuid', description: "Only the terminal on this device (the terminal's deviceId)." })),
  }),
]);
