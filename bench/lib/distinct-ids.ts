import { newTransactionId } from '../../src/shared/ids.js';

/**
 * Transaction ids for rows a bench writes in bulk, none repeated. A transaction id has 30 random
 * bits per second (src/shared/ids.ts): among 30 000 made within one second two are alike with odds
 * of about 0.4. The service's commits make new ids when one is taken; a bench's bulk insert does
 * not, so it draws them from here.
 */
export function distinctTransactionIds(): () => string {
  const made = new Set<string>();
  return () => {
    let id = newTransactionId();
    while (made.has(id)) id = newTransactionId();
    made.add(id);
    return id;
  };
}
