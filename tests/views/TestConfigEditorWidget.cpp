#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QToolButton>
#include <QtTest>

#include "views/theme/ThemePalette.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/RoundupDivisionsEditor.h"

using namespace allocscope::views;

namespace {
// Stand-ins for app's parseConfig / formatConfig adapters: a tiny grammar of key:value pairs with
// two known keys, so the test checks the widget's wiring, not the allocator's parser.
ValidationResult fakeValidate(const QString& text) {
    ValidationResult r;
    r.accepted = true;
    r.verdict = QStringLiteral("accepted");
    ConfigFormValues values;
    int offset = 0;
    for (const QString& token : text.split(QLatin1Char(','))) {
        const QString key = token.section(QLatin1Char(':'), 0, 0);
        const QString value = token.section(QLatin1Char(':'), 1);
        if (key == QLatin1String("expandable_segments")) {
            values.insert(key, value == QLatin1String("True"));
        } else if (key == QLatin1String("max_split_size_mb")) {
            values.insert(key, value.toLongLong());
        } else if (!token.isEmpty()) {
            r.accepted = false;
            r.verdict = QStringLiteral("ValueError at the first CUDA use");
            r.issues.push_back({ValidationIssue::Severity::Error, QStringLiteral("Unrecognized key '%1'").arg(key), offset,
                                static_cast<int>(key.size()), QStringLiteral("expandable_segments")});
            QString fixed = text;
            fixed.replace(offset, key.size(), QStringLiteral("expandable_segments"));
            r.correctedText = fixed;
        }
        offset += static_cast<int>(token.size()) + 1;
    }
    if (r.accepted) r.values = values;
    return r;
}

QString fakeFormat(const ConfigFormValues& v) {
    QStringList parts;
    if (v.value(QStringLiteral("max_split_size_mb")).isValid())
        parts << QStringLiteral("max_split_size_mb:%1").arg(v.value(QStringLiteral("max_split_size_mb")).toLongLong());
    if (v.value(QStringLiteral("expandable_segments")).toBool()) parts << QStringLiteral("expandable_segments:True");
    return parts.join(QLatin1Char(','));
}
}  // namespace

class TestConfigEditorWidget : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { applyTheme(*qApp, ThemeChoice::Light); }

    // The verdict line has a palette of its own; a theme switch after the text was checked must
    // recolour it (it stayed black on the dark theme's dark grey).
    void verdictLineFollowsTheTheme() {
        applyTheme(*qApp, ThemeChoice::Light);
        QCoreApplication::processEvents();
        ConfigEditorWidget editor;
        editor.setValidator(fakeValidate);
        editor.setFormatter(fakeFormat);
        editor.setText(QStringLiteral("max_split_size_mb:64"));
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QLabel* verdict = nullptr;
        for (QLabel* label : editor.findChildren<QLabel*>()) {
            if (label->text() == editor.statusText()) verdict = label;
        }
        QVERIFY(verdict != nullptr);
        const QColor lightText = qApp->palette().color(QPalette::WindowText);
        QCOMPARE(verdict->palette().color(QPalette::WindowText), lightText);
        applyTheme(*qApp, ThemeChoice::Dark);
        const QColor darkText = qApp->palette().color(QPalette::WindowText);
        QVERIFY(darkText != lightText);
        QTRY_COMPARE(verdict->palette().color(QPalette::WindowText), darkText);
    }

    void formHasEveryOptionWithTooltips() {
        ConfigEditorWidget editor;
        const char* keys[] = {"backend", "max_split_size_mb", "max_non_split_rounding_mb", "large_segment_size_mb",
                              "roundup_power2_divisions", "garbage_collection_threshold", "expandable_segments",
                              "release_lock_on_cudamalloc", "graph_capture_record_stream_reuse",
                              "per_process_memory_fraction", "pinned_use_cuda_host_register", "pinned_num_register_threads",
                              "pinned_use_background_threads", "pinned_reserve_segment_size_mb"};
        for (const char* key : keys) {
            QWidget* w = editor.fieldWidget(QString::fromLatin1(key));
            QVERIFY2(w, key);
            QVERIFY2(!w->toolTip().isEmpty(), key);
        }
        QVERIFY(qobject_cast<QComboBox*>(editor.fieldWidget(QStringLiteral("backend"))));
        QVERIFY(qobject_cast<QCheckBox*>(editor.fieldWidget(QStringLiteral("expandable_segments"))));
        QVERIFY(qobject_cast<RoundupDivisionsEditor*>(editor.fieldWidget(QStringLiteral("roundup_power2_divisions"))));
        QVERIFY(!editor.rawEditor()->toolTip().isEmpty());
        // Unset options are null values, so the formatter can leave them out.
        const ConfigFormValues v = editor.values();
        QVERIFY(!v.value(QStringLiteral("max_split_size_mb")).isValid());
        QCOMPARE(v.value(QStringLiteral("expandable_segments")).toBool(), false);
        QCOMPARE(v.value(QStringLiteral("roundup_power2_divisions")).toList().size(), 16);
    }

    void showsTheErrorWhereTheValidatorPointsAsYouType() {
        ConfigEditorWidget editor;
        editor.setValidator(fakeValidate);
        editor.setFormatter(fakeFormat);
        editor.resize(640, 480);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QSignalSpy validity(&editor, &ConfigEditorWidget::validityChanged);
        editor.rawEditor()->setFocus();
        QTest::keyClicks(editor.rawEditor(), QStringLiteral("max_split_size_mb:256,expandabel:True"));
        QCOMPARE(editor.text(), QStringLiteral("max_split_size_mb:256,expandabel:True"));
        QVERIFY(!editor.isAccepted());
        QVERIFY(validity.count() >= 1);
        QCOMPARE(validity.last().at(0).toBool(), false);
        const auto ranges = editor.underlinedRanges();
        QCOMPARE(ranges.size(), std::size_t(1));
        QCOMPARE(ranges[0].first, 22);   // where "expandabel" starts
        QCOMPARE(ranges[0].second, 10);  // its length
        QVERIFY(editor.statusText().contains(QStringLiteral("Unrecognized key 'expandabel'")));
        QVERIFY(editor.statusText().contains(QStringLiteral("column 23")));
        QVERIFY(editor.statusText().contains(QStringLiteral("expandable_segments")));
        QVERIFY(editor.rawEditor()->toolTip().contains(QStringLiteral("expandabel")));
        // The suggestion is one click away and fixes the text; the form follows.
        auto* apply = editor.findChild<QToolButton*>();
        QVERIFY(apply && apply->isVisibleTo(&editor));
        QTest::mouseClick(apply, Qt::LeftButton);
        QCOMPARE(editor.text(), QStringLiteral("max_split_size_mb:256,expandable_segments:True"));
        QVERIFY(editor.isAccepted());
        QVERIFY(editor.underlinedRanges().empty());
        QCOMPARE(validity.last().at(0).toBool(), true);
        QVERIFY(static_cast<QCheckBox*>(editor.fieldWidget(QStringLiteral("expandable_segments")))->isChecked());
        QCOMPARE(static_cast<QSpinBox*>(editor.fieldWidget(QStringLiteral("max_split_size_mb")))->value(), 256);
    }

    void formAndTextStayInSync() {
        ConfigEditorWidget editor;
        editor.setValidator(fakeValidate);
        editor.setFormatter(fakeFormat);
        QSignalSpy changed(&editor, &ConfigEditorWidget::textChanged);
        auto* expandable = static_cast<QCheckBox*>(editor.fieldWidget(QStringLiteral("expandable_segments")));
        auto* split = static_cast<QSpinBox*>(editor.fieldWidget(QStringLiteral("max_split_size_mb")));
        // form -> text
        expandable->setChecked(true);
        QCOMPARE(editor.text(), QStringLiteral("expandable_segments:True"));
        QCOMPARE(changed.last().at(0).toString(), QStringLiteral("expandable_segments:True"));
        split->setValue(512);
        QCOMPARE(editor.text(), QStringLiteral("max_split_size_mb:512,expandable_segments:True"));
        // back to "unlimited": the option leaves the text
        split->setValue(split->minimum());
        QCOMPARE(editor.text(), QStringLiteral("expandable_segments:True"));
        // text -> form
        editor.setText(QStringLiteral("max_split_size_mb:64"));
        QCOMPARE(split->value(), 64);
        QVERIFY(!expandable->isChecked());
        // A rejected text leaves the form as it was (the validator gives no values).
        editor.setText(QStringLiteral("max_split_size_mb:64,bogus:1"));
        QCOMPARE(split->value(), 64);
        QCOMPARE(editor.text(), QStringLiteral("max_split_size_mb:64,bogus:1"));
        // Return asks the app to apply; a pasted newline never enters the text.
        QSignalSpy apply(&editor, &ConfigEditorWidget::applyRequested);
        editor.setText(QStringLiteral("expandable_segments:True"));
        QTest::keyClick(editor.rawEditor(), Qt::Key_Return);
        QCOMPARE(apply.count(), 1);
        QCOMPARE(editor.text(), QStringLiteral("expandable_segments:True"));
        editor.rawEditor()->insertPlainText(QStringLiteral("\n"));
        QVERIFY(!editor.text().contains(QLatin1Char('\n')));
    }

    void roundupEditorModes() {
        RoundupDivisionsEditor editor;
        QSignalSpy spy(&editor, &RoundupDivisionsEditor::valueChanged);
        QCOMPARE(editor.mode(), RoundupDivisionsEditor::Mode::Off);
        QVariantList four;
        for (int i = 0; i < 16; ++i) four << 4;
        editor.setValue(four);
        QCOMPARE(editor.mode(), RoundupDivisionsEditor::Mode::Uniform);
        QCOMPARE(editor.value(), four);
        QCOMPARE(spy.count(), 0);  // programmatic changes are silent
        QVariantList list;
        for (int i = 0; i < 16; ++i) list << (i < 9 ? 1 : (i == 9 ? 2 : 8));
        editor.setValue(list);
        QCOMPARE(editor.mode(), RoundupDivisionsEditor::Mode::PerInterval);
        QCOMPARE(editor.value(), list);
        editor.intervalBox(0)->setCurrentIndex(editor.intervalBox(0)->findData(16));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.last().at(0).toList().at(0).toInt(), 16);
        editor.setMode(RoundupDivisionsEditor::Mode::Off);
        QCOMPARE(editor.value().at(9).toInt(), 0);
        QCOMPARE(RoundupDivisionsEditor::intervalName(10), QStringLiteral("1 GiB"));
        QVERIFY(!editor.intervalBox(15)->toolTip().isEmpty());
    }

    void noValidatorStillEdits() {
        ConfigEditorWidget editor;
        editor.setText(QStringLiteral("anything"));
        QCOMPARE(editor.text(), QStringLiteral("anything"));
        QVERIFY(editor.isAccepted());
        QVERIFY(editor.statusText().contains(QStringLiteral("not checked")));
    }
};

QTEST_MAIN(TestConfigEditorWidget)
#include "TestConfigEditorWidget.moc"
