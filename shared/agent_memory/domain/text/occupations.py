"""The industry an occupation belongs to, for a profile whose user named a job but not an industry
("前端开发" -> IT/互联网). Only occupations that belong to one industry are listed: "analyst" or
"经理" could be anywhere, and an industry the user did not say is better missing than wrong."""

from __future__ import annotations

import re

from pydantic import BaseModel


class Industry(BaseModel):
    zh: str
    en: str
    # Chinese words are found anywhere in the job title; English ones at the start of a word, any case.
    words_zh: tuple[str, ...]
    words_en: tuple[str, ...]

    def named_by(self, job_title: str) -> bool:
        lowered = job_title.lower()
        return any(word in job_title for word in self.words_zh) or any(
            re.search(rf"\b{re.escape(word)}", lowered) for word in self.words_en
        )


INDUSTRIES = (
    Industry(
        zh="IT/互联网",
        en="IT/Internet",
        words_zh=(
            "前端",
            "后端",
            "全栈",
            "软件",
            "程序员",
            "算法",
            "运维",
            "架构师",
            "开发工程师",
            "测试工程师",
            "数据科学",
            "数据工程",
            "机器学习",
            "人工智能",
            "互联网",
            "网站开发",
            "游戏开发",
            "移动开发",
        ),
        words_en=(
            "frontend",
            "front-end",
            "front end",
            "backend",
            "back-end",
            "back end",
            "full-stack",
            "fullstack",
            "full stack",
            "software",
            "programmer",
            "devops",
            "web developer",
            "app developer",
            "mobile developer",
            "game developer",
            "data scientist",
            "data engineer",
            "machine learning",
            "ml engineer",
            "ai engineer",
            "site reliability",
        ),
    ),
    Industry(
        zh="金融",
        en="Finance",
        words_zh=("银行", "投行", "基金", "证券", "交易员", "精算", "金融"),
        words_en=(
            "banker",
            "investment bank",
            "trader",
            "fund manager",
            "portfolio manager",
            "actuary",
            "financial analyst",
            "hedge fund",
            "private equity",
        ),
    ),
    Industry(
        zh="医疗",
        en="Healthcare",
        words_zh=("医生", "医师", "护士", "药剂师", "牙医"),
        words_en=("doctor", "physician", "surgeon", "nurse", "pharmacist", "dentist"),
    ),
    Industry(
        zh="教育",
        en="Education",
        words_zh=("教师", "老师", "教授", "讲师"),
        words_en=("teacher", "professor", "lecturer", "tutor"),
    ),
    Industry(
        zh="法律",
        en="Legal",
        words_zh=("律师", "法务"),
        words_en=("lawyer", "attorney", "solicitor", "barrister", "legal counsel"),
    ),
    Industry(zh="会计", en="Accounting", words_zh=("会计", "审计"), words_en=("accountant", "auditor")),
)


def industry_of(job_title: str, *, chinese: bool) -> str | None:
    """The industry of the first table entry the job title names, in the user's language; None if none."""
    for industry in INDUSTRIES:
        if industry.named_by(job_title):
            return industry.zh if chinese else industry.en
    return None
