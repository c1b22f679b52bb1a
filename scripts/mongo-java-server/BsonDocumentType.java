// How WorkspaceIndexedH2Backend.java stores a document in the H2 file: as BSON, through the
// library's own wire-protocol encoder and decoder. Left to itself, MVStore stores a value of a
// class it does not know through Java serialization, which made each create on the persistent
// fallback about three times as slow as in memory (bench/persistence.ts); BSON is also what the
// documents were when a client sent them, so every value the server holds can be written.

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;

final class BsonDocumentType extends BasicDataType<Document> {
  static final BsonDocumentType INSTANCE = new BsonDocumentType();

  private BsonDocumentType() {}

  /** A rough size in memory, for MVStore's cache accounting; computing it exactly would cost an encoding. */
  @Override
  public int getMemory(Document document) {
    return 64 + 96 * document.size();
  }

  @Override
  public void write(WriteBuffer buffer, Document document) {
    ByteBuf bson = Unpooled.buffer();
    try {
      BsonEncoder.encodeDocument(document, bson);
      buffer.putVarInt(bson.readableBytes());
      buffer.put(bson.nioBuffer());
    } finally {
      bson.release();
    }
  }

  @Override
  public Document read(ByteBuffer buffer) {
    int length = DataUtils.readVarInt(buffer);
    ByteBuffer bson = buffer.slice();
    bson.limit(length);
    buffer.position(buffer.position() + length);
    return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(bson));
  }

  @Override
  public Document[] createStorage(int size) {
    return new Document[size];
  }
}
