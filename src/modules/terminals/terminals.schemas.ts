import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid } from '../../shared/wire.js';
import { PageEnvelope, pageExample, PageQuery } from '../../shared/pagination.js';
import { PHYSICAL_POINT_OF_SALE_EXAMPLE, PointOfSaleRecord } from '../points-of-sale/points-of-sale.schemas.js';

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
/** Till 1 of the store, the fallback terminal, on its simulated device. */
const TERMINAL_RESPONSE_EXAMPLE = {
  terminal: {
    id: 'caf3cf7a-b952-491a-9534-481373c19cbc',
    pointOfSaleId: PHYSICAL_POINT_OF_SALE_EXAMPLE.id,
    deviceId: '01a236ca-875e-72ab-b84d-2caeade6c077',
    externalId: null,
    name: 'Till 1',
    fallback: true,
    createdAt: '2026-11-24T09:13:31.317Z',
  },
  pointOfSale: PHYSICAL_POINT_OF_SALE_EXAMPLE,
  device: { id: '01a236ca-875e-72ab-b84d-2caeade6c077', description: 'Virtual card terminal (sandbox simulator)', createdAt: '2026-11-24T09:13:31.317Z' },
};

export const TerminalResponse = Type.Object(
  { terminal: TerminalRecord, pointOfSale: PointOfSaleRecord, device: Nullable(DeviceRecord) },
  { examples: [TERMINAL_RESPONSE_EXAMPLE] },
);
export const TerminalList = PageEnvelope(TerminalResponse, { examples: [pageExample('/terminals', [TERMINAL_RESPONSE_EXAMPLE])] });
export const CreateTerminalBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    fallback: Type.Optional(Type.Boolean({ description: 'Route sales without terminal.id here. The first terminal is the fallback unless another is named.' })),
  },
  { examples: [{ name: 'Till 1' }, { name: 'Till 2', fallback: true }] },
);
export const TerminalParams = Type.Object({ terminalId: Uuid });
export const TerminalListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    pointOfSaleId: Type.Optional(Uuid),
    deviceId: Type.Optional(Type.String({ format: 'uuid', description: "Only the terminal on this device (the terminal's deviceId)." })),
  }),
]);
