// ReadAhead: the file reader's blocks come in file order, stop at the size the file had, report a
// read error, and a reader that stops early does not wait for the rest of the file.
#include <QtTest>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "storage/formats/ReadAhead.h"

using namespace allocscope::formats;

namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open(const QString& path) { return File(std::fopen(path.toLocal8Bit().constData(), "rb"), &std::fclose); }

}  // namespace

class TestReadAhead : public QObject {
    Q_OBJECT

private slots:
    void blocksComeInOrderUpToTheLimit() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("data");
        std::string bytes;
        for (int i = 0; i < 100'000; ++i) bytes += std::to_string(i * 7919) + ',';
        std::ofstream(path.toStdString(), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        // The reader was told the file is shorter than it is (it grew after it was measured).
        const std::size_t limit = bytes.size() - 1234;
        File file = open(path);
        QVERIFY(file != nullptr);
        ReadAhead ahead(file.get(), limit, 4096, 512, 3);
        std::string read;
        int blocks = 0;
        for (ReadAhead::Block block = ahead.next(); block.size > 0; block = ahead.next()) {
            QCOMPARE(block.headroom, std::size_t(512));
            QVERIFY(block.size <= 4096);
            read.append(reinterpret_cast<const char*>(block.data()), block.size);
            ++blocks;
            ahead.giveBack(std::move(block));
        }
        QVERIFY(ahead.error().empty());
        QCOMPARE(read.size(), limit);
        QVERIFY(read == bytes.substr(0, limit));
        QCOMPARE(blocks, static_cast<int>((limit + 4095) / 4096));
        QCOMPARE(ahead.next().size, std::size_t(0));  // and it stays at the end
    }

    void aReadErrorIsReported() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        File file = open(dir.path());  // a directory opens, but cannot be read
        QVERIFY(file != nullptr);
        ReadAhead ahead(file.get(), 1 << 20, 4096, 0);
        QCOMPARE(ahead.next().size, std::size_t(0));
        QVERIFY2(!ahead.error().empty(), "a failed read must say why");
    }

    void aReaderThatStopsEarlyDoesNotWait() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("big");
        std::ofstream(path.toStdString(), std::ios::binary) << std::string(size_t{8} << 20, 'x');
        File file = open(path);
        {
            ReadAhead ahead(file.get(), size_t{8} << 20, 4096, 0, 2);
            QCOMPARE(ahead.next().size, std::size_t(4096));
        }  // the thread stops here with most of the file unread (a hang would time the test out)
        QVERIFY(std::ftell(file.get()) < (8L << 20));
    }
};

QTEST_GUILESS_MAIN(TestReadAhead)
#include "TestReadAhead.moc"
