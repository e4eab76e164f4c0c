#pragma once
// memory_summary() at the current event: a compact current / peak table by default and, on its
// second tab, PyTorch's 77-column text verbatim in a monospace font.
#include <QWidget>

#include "views/data/SummaryTableData.h"

class QPlainTextEdit;
class QTabWidget;
class QTableView;

namespace allocscope::views {

class SummaryTableModel;

class MemorySummaryView : public QWidget {
    Q_OBJECT
public:
    explicit MemorySummaryView(QWidget* parent = nullptr);

    void setData(const SummaryTableData& input);
    bool isTextShown() const;

    QTableView* table() const { return table_; }
    QPlainTextEdit* textView() const { return text_; }
    SummaryTableModel* model() const { return model_; }

public slots:
    void showTable();
    void showText();

private:
    QTabWidget* tabs_;
    QTableView* table_;
    QPlainTextEdit* text_;
    SummaryTableModel* model_;
};

}  // namespace allocscope::views
