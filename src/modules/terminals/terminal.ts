/** A card terminal attached to a PHYSICAL point of sale. One terminal per point of sale is the fallback. */
export interface Terminal {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  deviceId: string | null;
  externalId: string | null;
  name: string | null;
  fallback: boolean;
  createdAt: string;
}

export interface Device {
  id: string;
  description: string;
  createdAt: string;
}
